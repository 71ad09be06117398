"""``list_my_requests``: the member's requests waiting for staff or decided in
the last 7 days, each named by what it is about, with its state and the staff's
reason; never another member's, never one decided long ago."""

from __future__ import annotations

import datetime

import pytest
import time_machine
from django.utils import timezone, translation

from gymnasia.when import when_written
from tools.calls import tool_call_correct, tool_call_decide
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def _asked(world, name, arguments, *, member="member", call_id="asked"):
    result = world.call(
        name, arguments, call_id=call_id, offered={name: "gated"}, member=member
    )
    assert result.status == "pending_approval", result.payload
    return ToolCallLog.objects.get(pk=result.payload["pending_action"])


def _listed(world, **context):
    return world.call("list_my_requests", {}, call_id="listed", **context)


def test_a_waiting_class_is_named_by_its_class_time_and_instructor(world):
    request = _asked(
        world, "book_class", {"session_id": world.ids["session_id:spinning"]}
    )

    result = _listed(world)

    assert result.status == "ok"
    [listed] = result.payload["requests"]
    assert listed["request_id"] == str(request.pk)
    assert listed["state"] == "waiting_for_staff"
    starts = world.today + datetime.timedelta(days=1)
    session = listed["facts"]["session"]
    assert session["class"] == "Spinning"
    assert session["starts_at"].startswith(f"{starts.isoformat()}T18:00")
    assert session["instructor"] == "Marta"
    assert "session_id" not in listed["facts"]  # the id means nothing to her


def test_a_rejection_is_listed_with_the_staffs_reason_and_when(world):
    request = _asked(
        world, "freeze_membership", {"start": world.day(10), "end": world.day(19)}
    )
    assert tool_call_decide(call_id=request.pk, to="rejected", reason="Obras en agosto")

    [listed] = _listed(world).payload["requests"]

    assert listed["state"] == "rejected"
    assert listed["reason"] == "Obras en agosto"
    assert listed["decided_at"] is not None
    assert listed["facts"] == {"start": world.day(10), "end": world.day(19)}
    start, end = (datetime.date.fromisoformat(world.day(n)) for n in (10, 19))
    with translation.override("en"):
        dates = when_written(start, end)  # "from 17 to 26 December"
    assert listed["about"] == f"Freeze the membership {dates}"


def test_a_request_decided_over_a_week_ago_is_not_listed_a_waiting_one_is(world):
    old = _asked(
        world, "freeze_membership", {"start": world.day(10), "end": world.day(12)}
    )
    assert tool_call_decide(call_id=old.pk, to="approved")
    waiting = _asked(
        world,
        "freeze_membership",
        {"start": world.day(20), "end": world.day(22)},
        call_id="asked-later",
    )

    with time_machine.travel(timezone.now() + datetime.timedelta(days=8)):
        result = _listed(world)

    assert [r["request_id"] for r in result.payload["requests"]] == [str(waiting.pk)]


def test_another_members_requests_are_never_listed(world):
    _asked(
        world,
        "freeze_membership",
        {"start": world.day(10), "end": world.day(12)},
        member=world.other_member,
    )

    result = _listed(world)

    assert result.status == "no_results"
    assert "requests" not in result.payload


def test_a_corrected_request_is_listed_as_its_correction(world):
    request = _asked(
        world, "freeze_membership", {"start": world.day(10), "end": world.day(19)}
    )
    corrected = tool_call_correct(
        call=request,
        arguments={"start": world.day(11), "end": world.day(19)},
        actor=None,
        difference={"start": [world.day(10), world.day(11)]},
    )

    [listed] = _listed(world).payload["requests"]

    assert listed["request_id"] == str(corrected.pk)
    assert (listed["state"], listed["corrected_by_staff"]) == (
        "waiting_for_staff",
        True,
    )


def test_it_is_not_offered_to_an_anonymous_visitor(world):
    result = _listed(world, member=None)

    assert result.status == "unknown_tool"
