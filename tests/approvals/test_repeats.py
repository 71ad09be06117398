"""R7 after staff decided: a request rejected, expired or corrected no longer blocks
the same request; one approved is that request, its result as it stands now."""

from __future__ import annotations

import pytest

from approvals.models import Decision
from approvals.selectors import request_state
from approvals.services import (
    pending_action_approve,
    pending_action_correct,
    pending_action_execute,
    pending_action_reject,
    pending_actions_expire,
)
from gymnasia.memberships.models import MembershipFreeze
from tests.factories import StaffRoleFactory
from tools.models import ToolCallEvent, ToolCallLog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]


def ask(world, call_id="call-1", start=10, end=19):
    return world.call(
        "freeze_membership",
        {"start": world.day(start), "end": world.day(end)},
        offered={"freeze_membership": "gated"},
        call_id=call_id,
    )


def _requests():
    """The calls that waited for staff."""
    return ToolCallLog.objects.filter(expires_at__isnull=False)


@pytest.fixture
def staff(world):
    return StaffRoleFactory(business=world.business, role="staff").user


def decide(world, staff, decision, action_id):
    if decision == "rejected":
        pending_action_reject(action_id=action_id, user=staff, reason="No")
    elif decision == "expired":
        expires_at = ToolCallLog.objects.get(pk=action_id).expires_at
        assert pending_actions_expire(now=expires_at) == 1
    else:
        pending_action_correct(
            action_id=action_id,
            user=staff,
            arguments={"start": world.day(20), "end": world.day(25)},
        )


@pytest.mark.parametrize("decision", ["rejected", "expired", "superseded"])
def test_a_request_decided_against_does_not_block_the_same_request(
    world, staff, decision
):
    """Asked again within the ten minutes, it is a new request that waits for
    staff, not a duplicate of one nobody will answer."""
    first = ask(world)
    decide(world, staff, decision, first.payload["pending_action"])
    requests = _requests().count()

    again = ask(world, call_id="call-2")

    assert again.status == "pending_approval"
    assert again.payload["pending_action"] != first.payload["pending_action"]
    assert _requests().count() == requests + 1
    waiting = ToolCallLog.objects.get(pk=again.payload["pending_action"])
    assert request_state(waiting.status) == "pending"
    call = ToolCallLog.objects.get(pk=first.payload["pending_action"])
    assert call.status == decision
    assert ToolCallEvent.objects.filter(call=call, kind=decision).count() == 1


def test_an_approved_request_not_yet_run_is_still_waiting(world, staff):
    first = ask(world)
    pending_action_approve(action_id=first.payload["pending_action"], user=staff)

    again = ask(world, call_id="call-2")

    assert again.status == "duplicate"
    assert again.payload["first"]["status"] == "pending_approval"
    assert _requests().count() == 1


def test_an_approved_request_run_since_answers_with_its_outcome(world, staff):
    """The repeat reads what the freeze became: made and verified."""
    first = ask(world)
    action_id = first.payload["pending_action"]
    pending_action_approve(action_id=action_id, user=staff)
    assert pending_action_execute(action_id=action_id) == "succeeded"

    again = ask(world, call_id="call-2")

    assert again.status == "duplicate"
    assert again.payload["first"]["status"] == "ok"
    assert again.payload["first"]["verification"] == "verified"
    assert again.payload["verification"] == "verified"
    assert MembershipFreeze.objects.count() == 1
    assert _requests().count() == 1


def test_an_approved_request_runs_on_its_own_call(world, staff):
    """No second row: the call that waited is the call that ran, and its trail
    says so, step by step."""
    first = ask(world)
    action_id = first.payload["pending_action"]
    rows = ToolCallLog.objects.count()
    pending_action_approve(action_id=action_id, user=staff)
    pending_action_execute(action_id=action_id)

    assert ToolCallLog.objects.count() == rows
    call = ToolCallLog.objects.get(provider_call_id="call-1")
    assert (call.status, call.verification) == ("ok", "verified")
    assert str(call.pk) == action_id  # the request is the call that ran
    assert Decision.objects.get(call=call).kind == "approved"
    assert list(call.events.values_list("kind", flat=True)) == [
        "approved",
        "executing",
    ]
    steps = [step["step"] for step in call.steps]
    assert steps[-3:] == ["approved", "attempt", "verified"]
