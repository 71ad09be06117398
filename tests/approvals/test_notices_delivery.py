"""Staff's mails through a real Celery worker (with beat), Redis, PostgreSQL and
an SMTP server on loopback: a burst is grouped, and reminders and escalations go
out once even when two sweeps run at the same moment."""

from __future__ import annotations

import datetime
import threading
import time
from collections import Counter

import pytest
from django.db import connection
from django.utils import timezone

from approvals.models import StaffNotice
from approvals.services import pending_actions_sweep
from tests.approvals.test_worker import Worker, request, wait_for
from tests.factories import StaffRoleFactory, UserFactory
from tests.smtp_server import smtp_server
from tools.models import ToolCallLog

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def smtp():
    with smtp_server() as (port, inbox):
        yield port, inbox


def mailing_worker(tmp_path, port: int, *, beat: bool) -> Worker:
    return Worker(
        tmp_path / "worker.log",
        env={
            "EMAIL_HOST": "127.0.0.1",
            "EMAIL_PORT": str(port),
            "SITE_URL": "http://gym.test",
        },
        beat=beat,
    )


@pytest.fixture
def people(world):
    staff = StaffRoleFactory(
        business=world.business,
        role="staff",
        user=UserFactory(email="staff@example.com"),
    )
    owner = StaffRoleFactory(
        business=world.business,
        role="owner",
        user=UserFactory(email="owner@example.com"),
    )
    return staff, owner


def test_fifty_requests_in_a_minute_make_at_most_two_mails_each(
    world, people, smtp, tmp_path
):
    port, inbox = smtp
    worker = mailing_worker(tmp_path, port, beat=True)
    worker.start()
    try:
        calls = []
        for number in range(50):
            day = 10 + number  # fifty freezes of a day each, none overlapping
            calls.append(request(world, day, day, f"c-{number}"))
            if number % 10 == 9:
                time.sleep(0.5)
        wait_for(
            lambda: StaffNotice.objects.filter(status="sent").count() == 100,
            seconds=100,
        )
        time.sleep(2)  # nothing more comes
    finally:
        worker.stop()

    per_person = Counter(address for mail in inbox.mails for address in mail.to)
    assert per_person == {"staff@example.com": 2, "owner@example.com": 2}
    for address in per_person:
        links = "".join(mail.part("text/plain") for mail in inbox.to(address))
        assert links.count("http://gym.test/inbox/link/") == 100  # two links a request
        assert all(str(call.pk) not in links for call in calls)  # ids stay inside


def test_a_reminder_and_an_escalation_go_out_once_under_two_sweeps(
    world, people, smtp, tmp_path
):
    port, inbox = smtp
    call = request(world, 10, 19, "c-1")
    long_ago = timezone.now() - datetime.timedelta(minutes=61)
    ToolCallLog.objects.filter(pk=call.pk).update(
        created_at=long_ago, expires_at=timezone.now() + datetime.timedelta(hours=2)
    )
    worker = mailing_worker(tmp_path, port, beat=False)
    worker.start()
    barrier = threading.Barrier(2)
    results = []

    def sweep():
        barrier.wait()
        try:
            results.append(pending_actions_sweep(now=timezone.now()))
        finally:
            connection.close()

    try:
        threads = [threading.Thread(target=sweep) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        inbox.wait(2)
        time.sleep(3)  # a second mail would have come by now
        pending_actions_sweep(now=timezone.now())
        time.sleep(2)
    finally:
        worker.stop()

    sent = Counter(
        StaffNotice.objects.filter(status="sent").values_list("role__role", "kind")
    )
    assert sent == {
        ("staff", "reminder"): 1,
        ("owner", "reminder"): 1,
        ("owner", "escalation"): 1,
    }
    assert sorted(address for mail in inbox.mails for address in mail.to) == [
        "owner@example.com",
        "staff@example.com",
    ]
    (owners,) = inbox.to("owner@example.com")
    assert "2 cosas te esperan" in owners.subject
    assert sum(r["escalated"] for r in results) == 1
