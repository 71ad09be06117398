"""Refusals carry a code, the field and plain parameters beside the precise
English reason the model reads (issue 33, point 5)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from django.apps import apps

from tools.dispatcher import dispatch_tool_call
from tools.selection import ToolPolicy
from tools.types import ToolCall

pytestmark = pytest.mark.django_db


def rows() -> int:
    return sum(
        model._default_manager.count()
        for label in ("nutrition", "classes", "memberships")
        for model in apps.get_app_config(label).get_models()
    )


def add_rice(world, **changed):
    arguments = {
        "date": world.day(0),
        "meal": "lunch",
        "food_id": world.ids["food_id:rice_white"],
        "grams": 100,
        **changed,
    }
    return world.call("add_food_to_meal", arguments)


def test_zero_grams_is_refused_with_its_code_and_the_schemas_reason(world):
    """0 g refused by the schema: the model reads the schema's reason, and the
    result says it as data, the limit included; nothing is written."""
    before = rows()

    result = add_rice(world, grams=0)

    assert result.status == "invalid_arguments"
    assert result.payload["errors"] == [
        "grams: 0 is less than or equal to the minimum of 0"
    ]
    assert result.payload["refusals"] == [
        {"code": "more_than", "field": "grams", "params": {"limit": 0}}
    ]
    assert rows() == before


@pytest.mark.parametrize(
    ("changed", "refusal"),
    [
        (
            {"meal": "brunch"},
            {
                "code": "not_one_of",
                "field": "meal",
                "params": {"choices": ["breakfast", "lunch", "dinner", "snack"]},
            },
        ),
        ({"date": "mañana"}, {"code": "not_a_date", "field": "date", "params": {}}),
        (
            {"grams": 9000},
            {"code": "at_most", "field": "grams", "params": {"limit": 5000}},
        ),
        (
            {"grams": "lots"},
            {"code": "wrong_type", "field": "grams", "params": {"expected": "number"}},
        ),
    ],
)
def test_each_schema_keyword_has_its_code(world, changed, refusal):
    before = rows()

    result = add_rice(world, **changed)

    assert result.status == "invalid_arguments"
    assert result.payload["refusals"] == [refusal]
    assert len(result.payload["errors"]) == 1
    assert rows() == before


def test_a_missing_argument_names_the_field(world):
    result = world.call("freeze_membership", {"start": world.day(5)})

    assert result.payload["refusals"] == [
        {"code": "missing", "field": "end", "params": {}}
    ]
    assert result.payload["errors"] == ["arguments: 'end' is a required property"]


def test_unreadable_arguments_are_refused_as_unreadable(world):
    result = world.call("search_foods", "{not json")

    assert result.payload["refusals"] == [
        {"code": "unreadable", "field": None, "params": {}}
    ]
    assert result.payload["errors"] == ["The arguments are not valid JSON."]


def test_a_domain_refusal_carries_its_code(world):
    """The business rule's own reason for the model, and its code for her."""
    before = rows()

    result = world.call("book_class", {"session_id": world.ids["session_id:yoga"]})

    assert result.payload["errors"] == ["This class is full."]
    assert result.payload["refusals"] == [
        {"code": "class_full", "field": None, "params": {}}
    ]
    assert rows() == before


def test_a_domain_refusal_with_figures_carries_them_as_params(world):
    result = add_rice(world, date="2001-01-01")

    assert result.status == "invalid_arguments"
    (refusal,) = result.payload["refusals"]
    assert refusal["code"] == "outside_diary_days"
    assert refusal["field"] == "date"
    assert set(refusal["params"]) == {"back", "ahead"}


def test_the_owners_limit_is_a_refusal_with_the_limit(world, stripe):
    world.connect_stripe(stripe)
    context = world.context()
    offered = {
        **context.offered,
        "refund_payment": ToolPolicy("auto", max_amount=Decimal("20.00")),
    }
    arguments = {"payment_id": world.ids["payment_id:monthly_fee"], "amount": 25}

    result = dispatch_tool_call(
        ToolCall(id="c", name="refund_payment", arguments=arguments),
        replace(context, offered=offered),
    )

    assert result.payload["errors"] == [
        "The amount is above this gym's limit of 20.00."
    ]
    assert result.payload["refusals"] == [
        {"code": "over_limit", "field": "amount", "params": {"limit": "20.00"}}
    ]
    assert stripe.refund_posts() == []
