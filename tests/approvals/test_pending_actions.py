"""Pending actions: decided once, executed once, and handed to a person when nobody
can know what happened. The task bodies are called directly here; delivery through a
real broker and worker is not exercised by these tests."""

from __future__ import annotations

import datetime
import threading
from contextlib import nullcontext

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from approvals.models import Decision
from approvals.selectors import request_state
from approvals.services import (
    pending_action_approve,
    pending_action_execute,
    pending_action_reject,
    pending_actions_expire,
    pending_actions_sweep,
)
from gymnasia.errors import Conflict, NotFound
from gymnasia.memberships.models import MembershipFreeze
from tests.factories import BusinessFactory, MembershipFactory, StaffRoleFactory
from tests.faults import Fault, inject_fault
from tests.tools.world import build_world
from tools.calls import execution_lease
from tools.execution import CallContext, execute_and_verify
from tools.models import Handoff, ToolCallEvent, ToolCallLog
from tools.registry import published_registry
from tools.selection import ToolPolicy

pytestmark = pytest.mark.django_db


def request_freeze(
    world, start=10, end=19, conversation="conversation-1", member="member"
):
    result = world.call(
        "freeze_membership",
        {"start": world.day(start), "end": world.day(end)},
        offered={"freeze_membership": "gated"},
        conversation=conversation,
        member=member,
    )
    assert result.status == "pending_approval"
    return ToolCallLog.objects.get(pk=result.payload["pending_action"])


@pytest.fixture
def staff(world):
    return StaffRoleFactory(business=world.business, role="staff").user


@pytest.fixture
def sent(monkeypatch):
    """The task messages an approval would send to the broker."""
    messages: list[str] = []
    monkeypatch.setattr(
        "approvals.tasks.execute_approved_action.delay",
        lambda action_id: messages.append(action_id),
    )
    return messages


def kinds(action):
    return list(
        ToolCallEvent.objects.filter(call=action).values_list("kind", flat=True)
    )


def test_a_gated_call_is_queued_with_its_expiry(world):
    with time_machine.travel(timezone.now(), tick=False):
        action = request_freeze(world)
    assert action.status == "pending_approval"
    assert request_state(action.status) == "pending"
    assert action.gated
    assert action.expires_at - action.created_at == datetime.timedelta(hours=24)
    assert kinds(action) == []  # proposed; nothing has happened to it yet
    assert not Decision.objects.exists()


def test_approval_happens_once_and_sends_the_task_after_commit(
    world, staff, sent, django_capture_on_commit_callbacks
):
    action = request_freeze(world)
    with django_capture_on_commit_callbacks(execute=True):
        approved = pending_action_approve(action_id=action.pk, user=staff, reason="ok")
    assert approved.pk == action.pk
    assert (
        approved.status,
        approved.decision.decided_by,
        approved.decision.reason,
    ) == (
        "approved",
        staff,
        "ok",
    )
    assert sent == [str(action.pk)]
    with pytest.raises(Conflict):
        pending_action_approve(action_id=action.pk, user=staff)
    assert kinds(action) == ["approved"]
    assert Decision.objects.get().kind == Decision.Kind.APPROVED


def test_rejection_keeps_the_reason_and_blocks_approval(world, staff, sent):
    action = request_freeze(world)
    rejected = pending_action_reject(
        action_id=action.pk, user=staff, reason="Agosto está cerrado"
    )
    assert (rejected.status, rejected.decision.reason) == (
        "rejected",
        "Agosto está cerrado",
    )
    with pytest.raises(Conflict):
        pending_action_approve(action_id=action.pk, user=staff)
    assert sent == []
    assert MembershipFreeze.objects.count() == 0


def test_an_expired_request_cannot_be_approved(world, staff, sent):
    action = request_freeze(world)
    with time_machine.travel(timezone.now() + datetime.timedelta(hours=25)):
        with pytest.raises(Conflict):
            pending_action_approve(action_id=action.pk, user=staff)
    action.refresh_from_db()
    assert action.status == "expired"
    assert sent == []


def test_staff_of_another_gym_cannot_see_or_decide(world, sent, row_counts):
    action = request_freeze(world)
    outsider = StaffRoleFactory(business=BusinessFactory(), role="owner").user
    before = row_counts()
    for decide in (pending_action_approve, pending_action_reject):
        with pytest.raises(NotFound):
            decide(action_id=action.pk, user=outsider)
    assert row_counts() == before


def test_an_approved_action_runs_once_and_is_verified(world, staff, sent):
    action = request_freeze(world)
    pending_action_approve(action_id=action.pk, user=staff)
    calls = ToolCallLog.objects.count()
    assert pending_action_execute(action_id=action.pk) == "succeeded"
    action.refresh_from_db()
    assert action.result["verification"] == "verified"
    assert action.status == "ok"  # the call itself ran: no second row
    assert ToolCallLog.objects.count() == calls
    assert MembershipFreeze.objects.count() == 1
    assert pending_action_execute(action_id=action.pk) == "succeeded"  # redelivered
    assert MembershipFreeze.objects.count() == 1
    assert kinds(action) == ["approved", "executing"]
    action.refresh_from_db()
    assert request_state(action.status) == "succeeded"


def running_elsewhere(action, *, lease_until):
    """As a delivery leaves the request that claimed its call and was then lost
    (its worker gone): the call executing, under its lease."""
    ToolCallLog.objects.filter(pk=action.pk).update(
        status="executing", lease_until=lease_until
    )


def test_a_second_delivery_while_the_call_runs_does_nothing_more(world, staff, sent):
    """Neither a second run nor a false "unknown": the call is running."""
    action = request_freeze(world)
    pending_action_approve(action_id=action.pk, user=staff)
    running_elsewhere(action, lease_until=timezone.now() + execution_lease())

    assert pending_action_execute(action_id=action.pk) == "executing"

    assert ToolCallLog.objects.get(pk=action.pk).status == "executing"
    assert Handoff.objects.count() == 0
    assert MembershipFreeze.objects.count() == 0


def test_a_call_whose_lease_passed_becomes_unknown_with_one_handoff(world, staff, sent):
    action = request_freeze(world)
    pending_action_approve(action_id=action.pk, user=staff)
    running_elsewhere(action, lease_until=timezone.now() + execution_lease())
    later = timezone.now() + execution_lease() + datetime.timedelta(seconds=1)
    counts = pending_actions_sweep(now=later)
    pending_actions_sweep(now=later)  # a second sweep finds nothing more
    assert pending_action_execute(action_id=action.pk) == "unknown"  # nor a delivery

    assert counts["unknown"] == 1
    action.refresh_from_db()
    assert request_state(action.status) == "unknown"
    handoff = Handoff.objects.get()
    assert handoff.tried["tool"] == "freeze_membership"
    assert handoff.cause == "worker_stopped"
    assert MembershipFreeze.objects.count() == 0
    assert kinds(action)[-1] == "unknown_outcome"
    assert ToolCallLog.objects.get(pk=action.pk).status == "unknown_outcome"


def test_an_approved_action_that_fails_is_recorded_as_failed(world, staff, sent):
    action = request_freeze(world)
    pending_action_approve(action_id=action.pk, user=staff)
    with inject_fault("memberships", Fault.STORAGE_FAILURE):
        assert pending_action_execute(action_id=action.pk) == "failed"
    action.refresh_from_db()
    assert action.result["verification"] == "not_applied"
    assert request_state(action.status) == "failed"
    assert MembershipFreeze.objects.count() == 0


def test_an_approved_action_whose_answer_is_lost_is_unknown_and_handed_off(
    world, staff, sent
):
    action = request_freeze(world)
    pending_action_approve(action_id=action.pk, user=staff)
    with inject_fault("memberships", Fault.TIMEOUT_AFTER_COMMIT):
        assert pending_action_execute(action_id=action.pk) == "unknown"
    assert MembershipFreeze.objects.count() == 1
    assert Handoff.objects.get().tool_call == action  # the call itself


def test_the_sweep_expires_resends_and_hands_over(world, staff, sent):
    overdue = request_freeze(world, 10, 12)
    lost = request_freeze(world, 20, 22)
    stuck = request_freeze(world, 30, 32)
    for action in (lost, stuck):
        pending_action_approve(action_id=action.pk, user=staff)
    running_elsewhere(stuck, lease_until=timezone.now())
    Decision.objects.filter(call=lost).update(
        decided_at=timezone.now() - datetime.timedelta(minutes=5)
    )
    with time_machine.travel(timezone.now() + datetime.timedelta(hours=25)):
        counts = pending_actions_sweep()
    assert counts == {
        "expired": 1,
        "resent": 1,
        "unknown": 1,
        "interrupted": 0,
        "told": 1,  # the stuck one's member, of its unknown outcome
        "reminded": 0,  # nothing waits any more
        "escalated": 0,
        "mailed": 0,
        "webhooks": 0,
    }
    statuses = {
        a.pk: request_state(a.status)
        for a in ToolCallLog.objects.filter(expires_at__isnull=False)
    }
    assert statuses[overdue.pk] == "expired"
    assert statuses[stuck.pk] == "unknown"
    assert sent == [str(lost.pk)]


def test_expiry_happens_once(world):
    request_freeze(world)
    later = timezone.now() + datetime.timedelta(days=2)
    assert pending_actions_expire(now=later) == 1
    assert pending_actions_expire(now=later) == 0


def race(*attempts):
    """Run the attempts at the same instant in threads; return what each raised."""
    barrier = threading.Barrier(len(attempts))
    outcomes: list[object] = [None] * len(attempts)

    def run(index, attempt):
        try:
            barrier.wait()
            outcomes[index] = attempt()
        except (Conflict, NotFound) as error:
            outcomes[index] = error
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=(i, a)) for i, a in enumerate(attempts)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def another_member(world):
    """A member of the world's gym of their own: one member's freezes waiting for
    staff may not overlap."""
    return MembershipFactory(member__business=world.business).member


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_approvals_at_once_decide_once(sent):
    world = build_world()
    staff = [
        StaffRoleFactory(business=world.business, role="staff").user for _ in range(2)
    ]
    for repetition in range(200):
        action = request_freeze(
            world, conversation=f"race-{repetition}", member=another_member(world)
        )
        outcomes = race(
            *(
                lambda user=user, pk=action.pk: pending_action_approve(
                    action_id=pk, user=user
                )
                for user in staff
            )
        )
        assert sum(isinstance(o, Conflict) for o in outcomes) == 1
        assert kinds(action).count("approved") == 1
        assert Decision.objects.get(call=action).kind == Decision.Kind.APPROVED
    assert len(sent) == 200
    assert len(set(sent)) == 200


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_approval_racing_rejection_or_expiry_ends_with_one_decision(sent):
    world = build_world()
    user = StaffRoleFactory(business=world.business, role="staff").user
    for repetition in range(50):
        action = request_freeze(
            world, conversation=f"reject-{repetition}", member=another_member(world)
        )
        pk = action.pk
        race(
            lambda pk=pk: pending_action_approve(action_id=pk, user=user),
            lambda pk=pk: pending_action_reject(action_id=pk, user=user),
        )
        decisions = [
            k for k in kinds(action) if k in ("approved", "rejected", "expired")
        ]
        assert len(decisions) == 1
        assert Decision.objects.filter(call=action).count() == 1
    for repetition in range(50):
        action = request_freeze(
            world, conversation=f"expire-{repetition}", member=another_member(world)
        )
        ToolCallLog.objects.filter(pk=action.pk).update(
            expires_at=timezone.now() + datetime.timedelta(milliseconds=5)
        )
        pk = action.pk
        race(
            lambda pk=pk: pending_action_approve(action_id=pk, user=user),
            lambda: pending_actions_expire(
                now=timezone.now() + datetime.timedelta(seconds=1)
            ),
        )
        decisions = [
            k for k in kinds(action) if k in ("approved", "rejected", "expired")
        ]
        assert len(decisions) == 1
        assert Decision.objects.filter(call=action).count() == 1


def test_the_expiry_comes_from_the_agents_tool_setting(world):
    from dataclasses import replace

    from tools.dispatcher import dispatch_tool_call
    from tools.selection import ToolPolicy
    from tools.types import ToolCall

    policy = ToolPolicy(mode="gated", approval_valid_for=datetime.timedelta(minutes=30))
    context = replace(world.context(), offered={"freeze_membership": policy})
    call = ToolCall(
        id="c",
        name="freeze_membership",
        arguments={"start": world.day(5), "end": world.day(6)},
    )
    with time_machine.travel(timezone.now(), tick=False):
        result = dispatch_tool_call(call, context)
    action = ToolCallLog.objects.get(pk=result.payload["pending_action"])
    assert action.expires_at - action.created_at == datetime.timedelta(minutes=30)


@pytest.mark.parametrize("fault", [None, Fault.TIMEOUT_AFTER_COMMIT])
def test_an_execution_that_ends_after_its_lease_keeps_the_case_it_has(
    world, staff, sent, fault
):
    """The sweep handed the call to staff once its lease passed; the run that
    then ends (done, or itself unknown) adds no second case and does not
    overwrite the outcome recorded: what it found joins the call's trail."""
    action = request_freeze(world)
    pending_action_approve(action_id=action.pk, user=staff)
    running_elsewhere(action, lease_until=timezone.now())
    slow_run = ToolCallLog.objects.select_related("business", "member").get(
        pk=action.pk
    )
    pending_actions_sweep(now=timezone.now() + datetime.timedelta(seconds=1))
    recorded = ToolCallLog.objects.get(pk=action.pk).result

    with inject_fault("memberships", fault) if fault else nullcontext():
        context = CallContext(  # its clients are the block's
            business=slow_run.business,
            member=slow_run.member,
            conversation_key=slow_run.conversation_key,
            offered={"freeze_membership": ToolPolicy(mode="gated")},
        )
        result = execute_and_verify(
            tool=published_registry().get("freeze_membership"),
            arguments=dict(slow_run.arguments),
            log=slow_run,
            context=context,
        )

    assert result.status == "unknown_outcome"
    assert dict(result.payload) == recorded
    assert ToolCallLog.objects.get(pk=action.pk).result == recorded
    assert Handoff.objects.count() == 1
    late = ToolCallEvent.objects.get(call=action.pk, kind="late_result")
    assert late.parameters["result"]["status"] == ("unknown_outcome" if fault else "ok")
    assert MembershipFreeze.objects.count() == 1  # it was made: staff see it
