"""Whatever arguments a tool's schema accepts, its handler answers them: found,
refused or done, never a failure of its own. A model may send any such values (a
food of two letters, a date in the year 9999), and "the request failed" would tell
the member something broke when nothing did. Whatever arguments it refuses are
invalid and change nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from tests.fakes.stripe_server import running_fake_stripe
from tests.tools.world import build_world
from tools.registry import published_registry

pytestmark = pytest.mark.django_db

#: What a healthy integration's tool may answer to arguments its schema accepts.
ANSWERED = {
    "ok",
    "no_results",
    "not_found",
    "invalid_arguments",
    "duplicate",
    "pending_approval",
}


def _arguments(
    parameters: dict[str, Any], mode: GenerationMode = GenerationMode.POSITIVE
) -> st.SearchStrategy[Any]:
    """Arguments a tool's JSON schema accepts (or, ``NEGATIVE``, refuses), drawn by
    Schemathesis (the schema as a request body of a one-operation API document)."""
    document = {
        "openapi": "3.1.0",
        "info": {"title": "tool", "version": "1"},
        "paths": {
            "/call": {
                "post": {
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": parameters}},
                    },
                    "responses": {"200": {"description": "answered"}},
                }
            }
        },
    }
    operation = schemathesis.openapi.from_dict(document)["/call"]["POST"]
    cases = operation.as_strategy(generation_mode=mode)
    return cases.map(lambda case: case.body)


@pytest.mark.parametrize("name", sorted(published_registry().names()))
def test_any_arguments_the_schema_accepts_are_answered_never_failed(name):
    world = build_world()
    tool = published_registry().get(name)
    with running_fake_stripe("sk_test_" + "a" * 24) as stripe:
        world.connect_stripe(stripe)

        @settings(
            max_examples=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
            database=None,
        )
        @given(arguments=_arguments(dict(tool.declaration.parameters)), n=st.integers())
        def answered(arguments, n):
            result = world.call(name, arguments, call_id=f"call-{n}")
            assert result.status in ANSWERED, (arguments, result.payload)

        answered()


@pytest.mark.parametrize("name", sorted(published_registry().names()))
def test_any_arguments_the_schema_refuses_are_invalid_and_change_nothing(
    name, row_counts
):
    world = build_world()
    tool = published_registry().get(name)
    negative = _arguments(dict(tool.declaration.parameters), GenerationMode.NEGATIVE)
    before = row_counts()

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        database=None,
    )
    @given(arguments=negative)
    def refused(arguments):
        # As a model sends them: text, JSON or not.
        if isinstance(arguments, bytes):
            text = arguments.decode("utf-8", "replace")
        else:
            text = json.dumps(arguments)
        # Blank text is how a provider says "no arguments": the empty object.
        assume(text.strip())
        result = world.call(name, text)
        assert result.status == "invalid_arguments", (arguments, result.payload)
        assert result.payload["errors"]

    refused()
    changed = {k: v - before[k] for k, v in row_counts().items() if v != before[k]}
    assert list(changed) in ([], ["tools.ToolCallLog"])


#: Values at the edges of what the schemas accept, which random draws seldom reach.
EDGES = [
    ("list_classes", {"date_from": "9999-12-31", "date_to": "9999-12-31"}),
    ("list_classes", {"date_from": "0001-01-01", "date_to": "0001-01-01"}),
    ("list_classes", {"date_from": "0001-01-01", "date_to": "9999-12-31"}),
    ("get_meal_diary", {"date": "9999-12-31"}),
    ("get_meal_diary", {"date": "0001-01-01"}),
    ("freeze_membership", {"start": "9999-12-30", "end": "9999-12-31"}),
    ("freeze_membership", {"start": "0001-01-01", "end": "9999-12-31"}),
    (
        "add_food_to_meal",
        {"date": "9999-12-31", "meal": "lunch", "food_id": 1, "grams": 5000},
    ),
    (
        "add_food_to_meal",
        {"date": "0001-01-01", "meal": "lunch", "food_id": 1, "grams": 5e-324},
    ),
    ("book_class", {"session_id": 2**63}),
    ("cancel_booking", {"booking_id": 2**70}),
    ("remove_meal_entry", {"entry_id": 2**64}),
    ("search_foods", {"query": "%_\\"}),
    ("search_foods", {"query": "té"}),
]


@pytest.mark.parametrize(("name", "arguments"), EDGES)
def test_arguments_at_the_edges_of_the_schema_are_answered_never_failed(
    name, arguments
):
    """The last day a date can name (9999-12-31) made the class list fail."""
    world = build_world()

    result = world.call(name, arguments)

    assert result.status in ANSWERED, result.payload
