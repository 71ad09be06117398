"""The dispatcher's decisions and outcomes, with no language model anywhere."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from decimal import Decimal

import pytest
from django.apps import apps

from gymnasia.classes.models import Booking
from gymnasia.memberships.models import MembershipFreeze
from gymnasia.nutrition.models import MealEntry
from tests.faults import SLOW_WRITE_SECONDS, Fault, inject_fault
from tools.dispatcher import dispatch_tool_call
from tools.models import Handoff, ToolCallLog
from tools.selection import ToolPolicy
from tools.types import ToolCall

pytestmark = pytest.mark.django_db

NAN, INFINITY = float("nan"), float("inf")
DOMAIN = ("gyms", "nutrition", "classes", "memberships")


def domain_counts() -> dict[str, int]:
    return {
        model._meta.label: model._default_manager.count()
        for label in DOMAIN
        for model in apps.get_app_config(label).get_models()
    }


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


# R4: invalid arguments change nothing and say why.


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ('{"date": "2026-12-01", "meal": "dinner", "food_id": 1,', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (
            {"date": "2026-12-01", "meal": "dinner", "food_id": "one", "grams": 50},
            "food_id",
        ),
        ({"date": "tomorrow", "meal": "dinner", "food_id": 1, "grams": 50}, "date"),
        ({"date": "2026-12-01", "meal": "brunch", "food_id": 1, "grams": 50}, "meal"),
        (
            {"date": "2026-12-01", "meal": "dinner", "food_id": 1},
            "'grams' is a required",
        ),
        ({"date": "2026-12-01", "meal": "dinner", "food_id": 1, "grams": -5}, "grams"),
        ({"date": "2026-12-01", "meal": "dinner", "food_id": 1, "grams": 0}, "grams"),
        (
            {"date": "2026-12-01", "meal": "dinner", "food_id": 1, "grams": True},
            "grams",
        ),
        (
            {
                "date": "2026-12-01",
                "meal": "dinner",
                "food_id": 1,
                "grams": 5,
                "member_id": 2,
            },
            "Additional properties",
        ),
        (
            '{"date": "2026-12-01", "meal": "dinner", "food_id": 1, "grams": NaN}',
            "not valid JSON",
        ),
    ],
)
def test_invalid_arguments_change_nothing(world, arguments, fragment):
    before = domain_counts()
    result = world.call("add_food_to_meal", arguments)
    assert result.status == "invalid_arguments"
    assert result.payload["verification"] == "not_applied"
    assert any(fragment in error for error in result.payload["errors"]), result.payload
    assert domain_counts() == before


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("search_foods", {"query": "arroz\x00"}),
        ("search_foods", '{"query": "arroz\\u0000"}'),
        ("search_foods", '{"query": "\\ud800"}'),
        ("handoff_to_staff", {"reason": "Quiero hablar\x00 con alguien"}),
        (
            "list_classes",
            {
                "date_from": "2026-12-01",
                "date_to": "2026-12-02",
                "class_type": "yoga\x00",
            },
        ),
    ],
)
def test_text_no_database_can_hold_is_invalid_and_logged(world, name, arguments):
    """A NUL character or a lone surrogate (JSON can spell both) made the database
    refuse the search and then the log row: the call raised instead of answering."""
    before = domain_counts()

    result = world.call(name, arguments, call_id="call\x00-1")

    assert result.status == "invalid_arguments"
    assert result.payload["errors"] == [
        "Text in the arguments cannot hold NUL characters or lone surrogates."
    ]
    assert domain_counts() == before
    log = ToolCallLog.objects.get()
    assert (log.status, log.valid, log.provider_call_id) == (
        "invalid_arguments",
        False,
        "call\ufffd-1",
    )
    assert "\x00" not in log.arguments_raw


@pytest.mark.parametrize(
    ("name", "arguments", "policy"),
    [
        (
            "add_food_to_meal",
            {"date": "2026-12-01", "meal": "dinner", "food_id": 1, "grams": NAN},
            ToolPolicy(mode="auto"),
        ),
        (
            "add_food_to_meal",
            '{"date": "2026-12-01", "meal": "dinner", "food_id": 1, "grams": 1e400}',
            ToolPolicy(mode="auto"),
        ),
        (
            "refund_payment",
            {"payment_id": "ch_1", "amount": NAN},
            ToolPolicy(mode="auto", max_amount=Decimal("20")),
        ),
        (
            "refund_payment",
            {"payment_id": "ch_1", "amount": -INFINITY},
            ToolPolicy(mode="gated", auto_limit=Decimal("5")),
        ),
    ],
)
def test_numbers_that_are_not_finite_are_invalid_and_logged(
    world, name, arguments, policy
):
    """An SDK that hands arguments over parsed can give NaN, which every bound of
    a schema lets through: the owner's limit and the action's key then raised, and
    the call had no answer and no row."""
    before = domain_counts()
    context = replace(world.context(), offered={name: policy})

    result = dispatch_tool_call(
        ToolCall(id="call-1", name=name, arguments=arguments), context
    )

    assert result.status == "invalid_arguments"
    assert result.payload["errors"] == ["Numbers in the arguments must be finite."]
    assert domain_counts() == before
    assert ToolCallLog.objects.get().status == "invalid_arguments"


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "arguments",
    [
        '{"query": ' + DEEP + "}",
        '{"query": "arroz", "x": ' + "[" * 900 + "]" * 900 + "}",
        {"query": json.loads("[" * 900 + "]" * 900)},
        {"query": json.loads("[" * 16 + '"arroz"' + "]" * 16)},  # 17 deep
    ],
    ids=["past the parser", "text", "parsed by an SDK", "just past the limit"],
)
def test_arguments_nested_too_deep_are_invalid_and_logged(world, arguments):
    """Arguments as deep as a JSON parser goes (a model can be talked into
    anything) ran the parser, or the schema's messages, out of recursion: the
    call raised and had no answer."""
    before = domain_counts()

    result = world.call("search_foods", arguments)

    assert result.status == "invalid_arguments"
    assert result.payload["errors"] == [
        "The arguments nest objects and lists more than 16 deep."
    ]
    assert domain_counts() == before
    assert ToolCallLog.objects.get().status == "invalid_arguments"


def test_arguments_nested_to_the_limit_are_judged_by_the_schema(world):
    arguments = {"query": json.loads("[" * 15 + '"arroz"' + "]" * 15)}  # 16 deep

    result = world.call("search_foods", arguments)

    assert result.status == "invalid_arguments"
    assert "is not of type 'string'" in result.payload["errors"][0]


def test_a_tool_name_no_database_can_hold_is_unknown_and_logged(world):
    result = world.call("search_foods\x00", {"query": "arroz"})

    assert result.status == "unknown_tool"
    assert ToolCallLog.objects.get().tool_name == "search_foods\ufffd"


def test_business_rule_refusal_is_invalid_arguments(world):
    before = domain_counts()
    result = world.call("book_class", {"session_id": world.ids["session_id:yoga"]})
    assert result.status == "invalid_arguments"
    assert result.payload["errors"] == ["This class is full."]
    assert domain_counts() == before


@pytest.mark.parametrize(
    ("name", "id_key", "label"),
    [
        ("cancel_booking", "booking_id", "their_booking"),
        ("remove_meal_entry", "entry_id", "their_entry"),
        ("book_class", "session_id", "foreign_session"),
        ("add_food_to_meal", "food_id", "foreign_food"),
    ],
)
def test_ids_of_others_are_not_found(world, name, id_key, label):
    arguments = {id_key: world.ids[f"{id_key}:{label}"]}
    if name == "add_food_to_meal":
        arguments.update(date=world.day(0), meal="lunch", grams=100)
    before = domain_counts()
    result = world.call(name, arguments)
    assert result.status == "not_found", result.payload
    assert result.payload["verification"] == "not_applied"
    assert domain_counts() == before


def test_cancelling_another_members_booking_leaves_it_confirmed(world):
    world.call("cancel_booking", {"booking_id": world.ids["booking_id:their_booking"]})
    theirs = Booking.objects.get(pk=world.ids["booking_id:their_booking"])
    assert theirs.status == "confirmed"


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
