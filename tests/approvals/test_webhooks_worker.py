"""Signed webhooks through a real Celery worker on Redis and PostgreSQL, whose
settings (``tests.approvals.webhook_worker_settings``) put retries a second
apart: failures retried until a 2xx, never a send after one, at most eight
tries."""

from __future__ import annotations

import json
import time

import pytest
from django.db import transaction

from approvals.models import Event, WebhookDelivery
from approvals.tasks import deliver_webhook
from approvals.webhooks import (
    webhook_body,
    webhook_deliveries_create,
)
from tests.approvals.test_worker import wait_for, worker  # noqa: F401
from tests.approvals.webhook_kit import (
    endpoint_at,
    event_of,
    new_secret,
    stored,
)
from tests.factories import BusinessFactory
from tests.fakes.webhook_receiver import running_receiver, signature_valid

WORKER_SETTINGS = "tests.approvals.webhook_worker_settings"


def start_webhook_worker(worker, monkeypatch) -> None:  # noqa: F811
    """Start the worker with retries a second apart and loopback allowed."""
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", WORKER_SETTINGS)
    monkeypatch.setenv("WEBHOOK_ALLOW_PRIVATE", "1")
    worker.start()


def record_event_with_deliveries(business) -> Event:
    """As the services record an event: in one transaction with its
    deliveries, whose tasks go to the broker on commit."""
    with transaction.atomic():
        event = event_of(business)
        webhook_deliveries_create(event=event)
    return event


def tasks_finished(worker) -> int:  # noqa: F811
    """How many webhook tasks the worker has finished, from its log."""
    log = worker.log.read_text(errors="replace")
    return sum(
        1
        for line in log.splitlines()
        if "approvals.deliver_webhook" in line and "succeeded" in line
    )


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_failing_twice_then_200_gets_the_event_three_times(
    worker,  # noqa: F811
    monkeypatch,
):
    """500, 500, then 200: three POSTs of the same body, and no more."""
    business = BusinessFactory()
    secret = new_secret()
    with running_receiver(500, 500, 200) as receiver:
        endpoint_at(business, receiver.url, secret)
        start_webhook_worker(worker, monkeypatch)

        event = record_event_with_deliveries(business)
        delivery = WebhookDelivery.objects.get(event=event)
        wait_for(lambda: stored(delivery).status == "delivered", 60)
        time.sleep(3)  # three retry delays: nothing more comes

    assert len(receiver.requests) == 3
    assert {r.body for r in receiver.requests} == {webhook_body(event)}
    assert json.loads(receiver.requests[0].body)["id"] == str(event.id)
    assert all(
        signature_valid(r.headers["Gymnasia-Signature"], r.body, secret)
        for r in receiver.requests
    )
    row = stored(delivery)
    assert (row.attempts, row.last_status_code) == (3, 200)


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_never_sends_twice_after_a_2xx(worker, monkeypatch):  # noqa: F811
    """A 200 settles the delivery: its task message delivered twice more makes
    no request."""
    business = BusinessFactory()
    with running_receiver(200) as receiver:
        endpoint_at(business, receiver.url, new_secret())
        start_webhook_worker(worker, monkeypatch)
        event = record_event_with_deliveries(business)
        delivery = WebhookDelivery.objects.get(event=event)
        wait_for(lambda: stored(delivery).status == "delivered", 60)

        deliver_webhook.delay(str(delivery.pk))  # the same message, again
        deliver_webhook.delay(str(delivery.pk))
        wait_for(lambda: tasks_finished(worker) == 3, 60)

    assert len(receiver.requests) == 1
    assert stored(delivery).attempts == 1


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_gives_up_after_eight_tries(worker, monkeypatch):  # noqa: F811
    """A receiver that always answers 500 gets eight tries, then none."""
    business = BusinessFactory()
    with running_receiver(500) as receiver:
        endpoint_at(business, receiver.url, new_secret())
        start_webhook_worker(worker, monkeypatch)
        event = record_event_with_deliveries(business)
        delivery = WebhookDelivery.objects.get(event=event)
        wait_for(lambda: stored(delivery).status == "failed", 90)
        time.sleep(3)

    assert len(receiver.requests) == 8
    assert stored(delivery).attempts == 8
