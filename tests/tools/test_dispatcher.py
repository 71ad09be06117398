"""The dispatcher's decisions and outcomes, with no language model anywhere."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from gymnasia.classes.models import Booking
from gymnasia.memberships.models import MembershipFreeze
from gymnasia.nutrition.models import MealEntry
from tests.faults import SLOW_WRITE_SECONDS, Fault, inject_fault
from tests.tools.domain_rows import domain_counts
from tools.dispatcher import dispatch_tool_call
from tools.models import Handoff, ToolCallLog
from tools.types import ToolCall

pytestmark = pytest.mark.django_db


def add_rice(world, grams=100, **kwargs):
    arguments = {
        "date": world.day(0),
        "meal": "dinner",
        "food_id": world.ids["food_id:rice_white"],
        "grams": grams,
    }
    return world.call("add_food_to_meal", arguments, **kwargs)


def dinner_entries(world):
    return MealEntry.objects.filter(member=world.member, meal="dinner").count()


# R2: unknown names run nothing.


@pytest.mark.parametrize(
    "name",
    [
        "search_foodz",
        "",
        "x" * 10_000,
        "search_fооds",  # two Cyrillic letters
        "SEARCH_FOODS",
        " search_foods",
        "search_foods\u200b",
        "book_class; DROP TABLE",
    ],
)
def test_unknown_tool_names_run_nothing(world, name):
    before = domain_counts()
    result = world.call(name, {"query": "arroz"})
    assert result.status == "unknown_tool"
    assert result.is_error
    assert result.payload == {
        "status": "unknown_tool",
        "message": "This tool is not available here.",
    }
    assert domain_counts() == before
    log = ToolCallLog.objects.get()
    assert (log.offered, log.status) == (False, "unknown_tool")


def test_a_tool_not_offered_this_turn_runs_nothing(world):
    before = domain_counts()
    result = add_rice(world, offered={"search_foods": "auto"})
    assert result.payload == {
        "status": "unknown_tool",
        "message": "This tool is not available here.",
    }
    assert domain_counts() == before


def test_a_member_tool_for_an_anonymous_visitor_runs_nothing(world):
    before = domain_counts()
    result = world.call("get_meal_diary", {"date": world.day(0)}, member=None)
    assert result.status == "unknown_tool"
    assert domain_counts() == before


def test_a_visitor_lists_classes_without_anyones_bookings(world):
    """Whether a place is the member's is said to that member only."""
    result = world.call(
        "list_classes",
        {"date_from": world.day(1), "date_to": world.day(1)},
        member=None,
    )
    assert result.status == "ok"
    assert all("member_booked" not in s for s in result.payload["sessions"])


# R5: distinct outcomes.


def test_nothing_matched_and_catalog_unavailable_differ(world):
    nothing = world.call("search_foods", {"query": "caviar"})
    with inject_fault("nutrition", Fault.UNAVAILABLE):
        down = world.call("search_foods", {"query": "arroz"}, call_id="call-2")
    assert nothing.status == "no_results" and not nothing.is_error
    assert down.status == "unavailable" and down.is_error
    assert nothing.payload["message"] != down.payload["message"]
    assert "foods" not in down.payload


# R6: reads retried on unavailable; writes only when provably not delivered.


def test_a_read_is_retried_while_unavailable(world):
    with inject_fault("nutrition", Fault.UNAVAILABLE, times=2):
        result = world.call("search_foods", {"query": "arroz"})
    assert result.status == "ok"
    assert ToolCallLog.objects.get().attempts == 3


def test_a_read_gives_up_after_bounded_attempts(world):
    with inject_fault("nutrition", Fault.UNAVAILABLE) as rule:
        result = world.call("search_foods", {"query": "arroz"})
    assert result.status == "unavailable"
    assert rule.spoiled == 3


def test_a_write_not_delivered_is_retried_once_done(world):
    with inject_fault("nutrition", Fault.NOT_DELIVERED, times=1):
        result = add_rice(world)
    assert result.status == "ok"
    assert result.payload["verification"] == "verified"
    assert dinner_entries(world) == 1
    assert ToolCallLog.objects.get().attempts == 2


def test_a_write_to_an_unavailable_integration_is_not_retried(world):
    with inject_fault("nutrition", Fault.UNAVAILABLE) as rule:
        result = add_rice(world)
    assert result.status == "unavailable"
    assert result.payload["verification"] == "not_applied"
    assert rule.spoiled == 1
    assert dinner_entries(world) == 0


def test_a_write_whose_storage_fails_is_controlled_and_the_next_call_works(world):
    with inject_fault("nutrition", Fault.STORAGE_FAILURE, times=1):
        failed = add_rice(world)
    assert failed.status == "failed"
    assert failed.payload["verification"] == "not_applied"
    assert dinner_entries(world) == 0
    after = add_rice(world, grams=120, call_id="call-2")
    assert after.status == "ok"
    assert dinner_entries(world) == 1


def test_a_write_that_times_out_after_committing_becomes_a_handoff(world):
    with inject_fault("nutrition", Fault.TIMEOUT_AFTER_COMMIT) as rule:
        result = add_rice(world)
    assert result.status == "unknown_outcome"
    assert result.payload["verification"] == "unverifiable"
    assert rule.spoiled == 1  # not retried
    assert dinner_entries(world) == 1  # exactly one effect
    handoff = Handoff.objects.get()
    assert str(handoff.pk) == result.payload["handoff"]
    assert handoff.tried["tool"] == "add_food_to_meal"
    assert handoff.tool_call == ToolCallLog.objects.get()
    # Why, as a code staff read in their language; no English words stored.
    assert (handoff.cause, handoff.reason, handoff.known) == ("no_answer", "", "")


@pytest.mark.postgres
def test_a_write_running_past_the_timeout_is_stopped_and_undone(world, settings):
    settings.TOOLS_EXECUTION_TIMEOUT = 0.3
    started = time.monotonic()
    with inject_fault("nutrition", Fault.SLOW_WRITE):
        result = add_rice(world)
    assert time.monotonic() - started < SLOW_WRITE_SECONDS
    assert result.status == "failed"
    assert result.payload["verification"] == "not_applied"
    settings.TOOLS_EXECUTION_TIMEOUT = 10
    assert dinner_entries(world) == 0


def test_a_write_that_silently_does_not_apply_is_caught(world):
    with inject_fault("nutrition", Fault.NOT_APPLIED):
        result = add_rice(world)
    assert result.status == "failed"
    assert result.payload["verification"] == "not_applied"
    assert "entry" not in result.payload
    assert dinner_entries(world) == 0


def test_a_write_whose_verifier_cannot_look_becomes_a_handoff(world):
    with inject_fault("classes", Fault.READS_UNAVAILABLE):
        result = world.call(
            "book_class", {"session_id": world.ids["session_id:spinning"]}
        )
    assert result.status == "unknown_outcome"
    assert result.payload["verification"] == "unverifiable"
    handoff = Handoff.objects.get()
    assert handoff.tool_call == ToolCallLog.objects.get()
    assert handoff.cause == "not_confirmed"
    assert Booking.objects.filter(member=world.member, status="confirmed").count() == 2


def test_a_write_whose_handler_faults_becomes_a_handoff_naming_the_fault(world):
    """A fault of the program while writing may have acted: a person takes it,
    told which fault (by its name, with the cause as a code)."""

    class Broken:
        def __getattr__(self, name):
            raise KeyError(name)

    # given an integration whose client faults on any use
    context = replace(world.context(), clients=lambda kind, business: Broken())

    # when a write runs
    result = dispatch_tool_call(
        ToolCall(
            id="call-1",
            name="book_class",
            arguments={"session_id": world.ids["session_id:spinning"]},
        ),
        context,
    )

    # then its outcome is unknown and a person takes it, told of the fault
    assert result.status == "unknown_outcome"
    handoff = Handoff.objects.get()
    assert (handoff.cause, handoff.tried["error"]) == ("handler_failed", "KeyError")
    assert handoff.tried["tool"] == "book_class"


# R3: gated writes wait for staff.


def test_a_gated_write_is_queued_and_not_done(world):
    offered = {"freeze_membership": "gated"}
    result = world.call(
        "freeze_membership",
        {"start": world.day(10), "end": world.day(19)},
        offered=offered,
    )
    assert result.status == "pending_approval"
    assert result.payload["verification"] == "not_applied"
    pending = ToolCallLog.objects.get(expires_at__isnull=False)
    assert str(pending.pk) == result.payload["pending_action"]
    assert pending.arguments == {"start": world.day(10), "end": world.day(19)}
    assert pending.gated
    assert pending.status == "pending_approval"
    assert MembershipFreeze.objects.count() == 0


def test_a_gated_write_with_invalid_arguments_is_not_queued(world):
    offered = {"freeze_membership": "gated"}
    result = world.call("freeze_membership", {"start": world.day(10)}, offered=offered)
    assert result.status == "invalid_arguments"
    assert ToolCallLog.objects.filter(expires_at__isnull=False).count() == 0


# The verification log.


def test_the_log_records_every_step_of_a_verified_write(world):
    result = add_rice(world)
    log = ToolCallLog.objects.get()
    assert [s["step"] for s in log.steps] == [
        "offered",
        "validated",
        "duplicate",
        "attempt",
        "verified",
    ]
    assert (log.provider_call_id, log.tool_name, log.status, log.verification) == (
        "call-1",
        "add_food_to_meal",
        "ok",
        "verified",
    )
    assert log.result == dict(result.payload)
    assert log.duration_ms is not None and log.finished_at is not None
    assert log.conversation_key == "conversation-1"


def test_result_figures_come_only_from_the_handler(world):
    result = world.call("search_foods", {"query": "arroz blanco"})
    [food] = result.payload["foods"]
    assert food["per_100g"]["carbohydrates_g"] == 28
    assert set(result.payload) == {"status", "foods", "count"}
