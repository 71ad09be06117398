"""R7, again on purpose: ``"again": true`` makes the same food once more a new
action, at most once per member message."""

from __future__ import annotations

import dataclasses

import pytest

from gymnasia.nutrition.models import MealEntry
from tools.dispatcher import AGAIN_POSSIBLE, dispatch_tool_call
from tools.models import ToolCallLog
from tools.types import ToolCall

pytestmark = pytest.mark.django_db


def add_rice(world, call_id, *, again=None, turn="message-1"):
    arguments = {
        "date": world.day(0),
        "meal": "dinner",
        "food_id": world.ids["food_id:rice_white"],
        "grams": 100,
    }
    if again is not None:
        arguments["again"] = again
    context = dataclasses.replace(world.context(), turn_key=turn)
    return dispatch_tool_call(
        ToolCall(id=call_id, name="add_food_to_meal", arguments=arguments),
        context,
    )


def entries(world):
    return MealEntry.objects.filter(member=world.member, meal="dinner").count()


def test_again_adds_a_second_entry(world):
    add_rice(world, "call-1", turn="message-1")

    second = add_rice(world, "call-2", again=True, turn="message-2")

    assert second.status == "ok"
    assert second.payload["verification"] == "verified"
    assert entries(world) == 2


def test_again_is_honoured_once_per_member_message(world):
    """A model looping in one turn cannot repeat the effect a third time."""
    add_rice(world, "call-1", turn="message-1")
    add_rice(world, "call-2", again=True, turn="message-2")

    third = add_rice(world, "call-3", again=True, turn="message-2")

    assert third.status == "duplicate"
    assert entries(world) == 2
    # The member's next message may ask once more.
    fourth = add_rice(world, "call-4", again=True, turn="message-3")
    assert fourth.status == "ok"
    assert entries(world) == 3


def test_without_again_the_same_call_is_a_duplicate_that_mentions_again(world):
    first = add_rice(world, "call-1")

    second = add_rice(world, "call-2", turn="message-2")

    assert second.status == "duplicate"
    assert second.payload["first"] == dict(first.payload)
    assert second.payload["message"] == AGAIN_POSSIBLE
    assert entries(world) == 1


def test_again_false_is_no_again(world):
    add_rice(world, "call-1")

    second = add_rice(world, "call-2", again=False, turn="message-2")

    assert second.status == "duplicate"
    assert entries(world) == 1


def test_again_is_no_part_of_the_action(world):
    """The entry made with ``again`` is the same action: the plain call after it
    is a duplicate, and the arguments logged leave ``again`` out."""
    add_rice(world, "call-1", again=True)

    second = add_rice(world, "call-2", turn="message-2")

    assert second.status == "duplicate"
    first = ToolCallLog.objects.get(provider_call_id="call-1")
    assert "again" not in first.arguments
    assert first.again_for == ""  # nothing to repeat: no allowance used
    assert entries(world) == 1


def test_again_on_a_tool_whose_effect_does_not_add_up_is_refused(world):
    """A booking or a freeze takes no ``again``: the schema refuses it, and
    nothing is written but the call's row."""
    before = ToolCallLog.objects.count()

    result = world.call(
        "book_class",
        {"session_id": world.ids["session_id:spinning"], "again": True},
    )

    assert result.status == "invalid_arguments"
    assert ToolCallLog.objects.count() == before + 1
    assert ToolCallLog.objects.get().status == "invalid_arguments"
