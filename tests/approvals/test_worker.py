"""Approved actions through a real Celery worker, Redis and PostgreSQL: executed once,
even when the worker is killed or the broker is down.

The worker is a subprocess on the test database. Where a test needs the worker to
stop at a precise point, it holds a row lock from another connection so that the
worker waits there, then kills it with SIGKILL.
"""

from __future__ import annotations

import datetime
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone
from psycopg import sql

from approvals.models import Decision
from approvals.selectors import request_state
from approvals.services import (
    pending_action_approve,
    pending_action_execute,
    pending_actions_sweep,
)
from gymnasia.celery import app
from gymnasia.errors import Conflict
from gymnasia.memberships.models import Membership, MembershipFreeze
from tests.factories import StaffRoleFactory
from tests.own_redis import OwnRedis
from tests.tools.world import build_world
from tools.calls import execution_lease
from tools.models import Handoff, ToolCallEvent, ToolCallLog

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]


def database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    """A Celery worker subprocess (solo pool: killing it kills the task too)."""

    def __init__(
        self, log: Path, *, env: dict[str, str] | None = None, beat: bool = False
    ) -> None:
        self.log = log
        self.env = env or {}
        self.beat = beat  # run beat's schedule inside the worker, as ``serve`` does
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "DEBUG": "1",
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "GYMNASIA_DATA_DIR": str(self.log.parent),
            **self.env,
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "gymnasia",
                "worker",
                "--pool=solo",
                *(["--beat"] if self.beat else []),
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while "ready." not in self.log.read_text(errors="replace"):
            assert self.process.poll() is None, self.log.read_text(errors="replace")
            assert time.monotonic() < deadline, "the worker did not start"
            time.sleep(0.2)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def worker(tmp_path) -> Iterator[Worker]:
    app.control.purge()
    running = Worker(tmp_path / "worker.log")
    yield running
    running.stop()
    app.control.purge()


def wait_for(predicate, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def request(world, start: int, end: int, conversation: str) -> ToolCallLog:
    result = world.call(
        "freeze_membership",
        {"start": world.day(start), "end": world.day(end)},
        offered={"freeze_membership": "gated"},
        conversation=conversation,
    )
    return ToolCallLog.objects.get(pk=result.payload["pending_action"])


def status(action: ToolCallLog) -> str:
    """The request's state as the inbox names it (its call's status, grouped)."""
    return request_state(
        ToolCallLog.objects.values_list("status", flat=True).get(pk=action.pk)
    )


class RowLock:
    """Holds ``SELECT … FOR UPDATE`` on one row from a connection of its own."""

    def __init__(self, table: str, pk: object) -> None:
        self.connection = psycopg.connect(
            database_url().replace("postgres://", "postgresql://")
        )
        query = sql.SQL("SELECT 1 FROM {} WHERE id = %s FOR UPDATE").format(
            sql.Identifier(table)
        )
        self.connection.execute(query, [pk])

    def release(self) -> None:
        self.connection.rollback()
        self.connection.close()


def waiting_on_lock() -> bool:
    with psycopg.connect(
        database_url().replace("postgres://", "postgresql://"), autocommit=True
    ) as c:
        return bool(
            c.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            ).fetchone()[0]
        )


def test_two_approvals_at_once_execute_once_each_time(worker):
    world = build_world()
    Membership.objects.update(
        ends_on=timezone.localdate() + datetime.timedelta(days=900)
    )
    staff = [
        StaffRoleFactory(business=world.business, role="staff").user for _ in range(2)
    ]
    worker.start()
    actions = []
    losing_clicks: list[object] = []
    for repetition in range(200):
        action = request(
            world, 2 + repetition * 2, 2 + repetition * 2, f"race-{repetition}"
        )
        barrier = threading.Barrier(2)

        def approve(user, pk=action.pk, barrier=barrier):
            barrier.wait()
            try:
                pending_action_approve(action_id=pk, user=user)
            except Conflict:
                losing_clicks.append(pk)
            finally:
                connection.close()

        threads = [threading.Thread(target=approve, args=(user,)) for user in staff]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        actions.append(action)
    requests = ToolCallLog.objects.filter(expires_at__isnull=False)
    wait_for(lambda: requests.filter(status="ok").count() == 200, 120)
    assert MembershipFreeze.objects.count() == 200
    for action in actions:
        assert status(action) == "succeeded"
        assert executions(action) == 1


def executions(action: ToolCallLog) -> int:
    """How many times the request's call was claimed to run."""
    return ToolCallEvent.objects.filter(call_id=action.pk, kind="executing").count()


def test_killed_before_the_claim_commits_then_executed_once(worker):
    world = build_world()
    staff = StaffRoleFactory(business=world.business, role="staff").user
    action = request(world, 10, 12, "killed-before")
    pending_action_approve(action_id=action.pk, user=staff)
    # The request's claim is an update of its call: it waits on our lock of the call.
    lock = RowLock("tools_toolcalllog", action.pk)
    worker.start()
    wait_for(waiting_on_lock)
    worker.kill()
    wait_for(lambda: not waiting_on_lock())  # the database noticed and rolled back
    lock.release()
    assert status(action) == "approved"
    worker.start()
    counts = pending_actions_sweep(now=timezone.now() + datetime.timedelta(minutes=5))
    assert counts["resent"] == 1
    wait_for(lambda: status(action) == "succeeded")
    assert MembershipFreeze.objects.count() == 1
    assert executions(action) == 1


def test_killed_while_executing_becomes_unknown_once_its_lease_passed(worker):
    """Not before: until then it may still be running."""
    world = build_world()
    staff = StaffRoleFactory(business=world.business, role="staff").user
    action = request(world, 10, 12, "killed-after")
    membership = Membership.objects.get(member=world.member)
    lock = RowLock("memberships_membership", membership.pk)
    worker.start()
    pending_action_approve(action_id=action.pk, user=staff)
    wait_for(lambda: status(action) == "executing")
    wait_for(waiting_on_lock)  # the freeze waits on our lock, after the claim
    worker.kill()
    wait_for(lambda: not waiting_on_lock())  # the database noticed and rolled back
    lock.release()
    worker.start()
    assert pending_actions_sweep()["unknown"] == 0  # the lease has not passed
    assert status(action) == "executing"
    after_the_lease = timezone.now() + execution_lease() + datetime.timedelta(seconds=1)
    assert pending_actions_sweep(now=after_the_lease)["unknown"] == 1
    assert status(action) == "unknown"
    assert Handoff.objects.filter(tool_call=action.pk).count() == 1
    assert Handoff.objects.count() == 1
    time.sleep(1)  # the restarted worker gets nothing to run again
    assert status(action) == "unknown"
    assert executions(action) == 1
    assert MembershipFreeze.objects.count() == 0


def test_a_delivery_while_the_execution_waits_on_a_lock_changes_nothing(worker):
    """The run waits 5 s on a row lock (within its own time limit); a second
    delivery and the sweep meanwhile do nothing, and the freeze ends verified,
    with no case for staff."""
    world = build_world()
    staff = StaffRoleFactory(business=world.business, role="staff").user
    action = request(world, 10, 12, "slow")
    membership = Membership.objects.get(member=world.member)
    lock = RowLock("memberships_membership", membership.pk)
    worker.start()
    pending_action_approve(action_id=action.pk, user=staff)
    wait_for(waiting_on_lock)
    started = time.monotonic()

    try:
        assert pending_action_execute(action_id=action.pk) == "executing"  # again
        swept = pending_actions_sweep()
        time.sleep(max(0.0, 5 - (time.monotonic() - started)))
    finally:
        lock.release()  # a failed check must not leave the row locked

    settled = ("expired", "resent", "unknown", "interrupted", "told")
    assert {key: swept[key] for key in settled} == dict.fromkeys(settled, 0)

    wait_for(lambda: status(action) == "succeeded")
    ended_verified_once(action)


def ended_verified_once(action: ToolCallLog) -> None:
    call = ToolCallLog.objects.get(pk=action.pk)
    assert (call.status, call.verification) == ("ok", "verified")
    assert Handoff.objects.count() == 0
    assert MembershipFreeze.objects.count() == 1
    assert executions(action) == 1
    kinds = list(call.events.values_list("kind", flat=True))
    assert kinds == ["approved", "executing"]
    # Its outcome was recorded and told once: one decision, marked told.
    [decision] = Decision.objects.filter(call=call)
    assert decision.kind == "approved"
    assert decision.told_at is not None


def test_a_message_slow_for_10_s_and_sent_again_runs_once_verified(worker):
    """The worker's start waits 10 s on a lock; the sweep takes its message for
    lost and sends it again, and another delivery arrives meanwhile: one run,
    verified, no "unknown", no case for staff."""
    world = build_world()
    staff = StaffRoleFactory(business=world.business, role="staff").user
    action = request(world, 10, 12, "slow-start")
    pending_action_approve(action_id=action.pk, user=staff)
    lock = RowLock("tools_toolcalllog", action.pk)
    worker.start()
    wait_for(waiting_on_lock)
    started = time.monotonic()
    later = timezone.now() + datetime.timedelta(minutes=5)
    assert pending_actions_sweep(now=later)["resent"] == 1
    second: list[str] = []

    def deliver() -> None:
        try:
            second.append(pending_action_execute(action_id=action.pk))
        finally:
            connection.close()

    thread = threading.Thread(target=deliver)
    thread.start()
    time.sleep(max(0.0, 10 - (time.monotonic() - started)))
    lock.release()
    thread.join(30)

    wait_for(lambda: status(action) == "succeeded")
    assert second and second[0] in ("succeeded", "executing")
    time.sleep(1)  # the message sent again finds it done
    ended_verified_once(action)


def fresh_broker_connections() -> None:
    """Make this process open new connections to the configured broker."""
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def own_redis(monkeypatch) -> Iterator[OwnRedis]:
    server = OwnRedis()
    server.start()
    monkeypatch.setattr(settings, "CELERY_BROKER_URL", server.url)
    monkeypatch.setattr(app.conf, "broker_url", server.url)
    fresh_broker_connections()  # new connections go to this broker
    yield server
    server.stop()
    monkeypatch.undo()
    fresh_broker_connections()


def test_broker_down_when_approving_then_the_sweep_runs_it_once(own_redis, tmp_path):
    world = build_world()
    staff = StaffRoleFactory(business=world.business, role="staff").user
    action = request(world, 10, 12, "broker-down")
    worker = Worker(tmp_path / "worker.log")
    try:
        own_redis.stop()  # the broker goes down
        fresh_broker_connections()
        approved = pending_action_approve(action_id=action.pk, user=staff)
        assert approved.status == "approved"  # the approval stands
        own_redis.start()  # the broker is back, and a worker with it
        fresh_broker_connections()
        worker.start()
        time.sleep(1)
        assert status(action) == "approved"  # nothing was sent while it was down
        counts = pending_actions_sweep(
            now=timezone.now() + datetime.timedelta(minutes=5)
        )
        assert counts["resent"] == 1
        wait_for(lambda: status(action) == "succeeded", 60)
        assert MembershipFreeze.objects.count() == 1
        assert executions(action) == 1
    finally:
        worker.stop()
