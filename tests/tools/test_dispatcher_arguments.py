"""R4 through the dispatcher, with no language model: arguments the schema or a
business rule refuses, text or numbers no database can hold, and ids of what
the member may not see change nothing and say why."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal

import pytest

from gymnasia.classes.models import Booking
from tests.tools.domain_rows import domain_counts
from tools.dispatcher import dispatch_tool_call
from tools.models import ToolCallLog
from tools.selection import ToolPolicy
from tools.types import ToolCall

pytestmark = pytest.mark.django_db

NAN, INFINITY = float("nan"), float("inf")


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
