"""R7: the same write in the same conversation within ten minutes is done once."""

from __future__ import annotations

import datetime
import threading

import pytest
import time_machine
from django.db import connection

from approvals.services import pending_action_approve, pending_action_execute
from gymnasia.classes.models import Booking
from gymnasia.nutrition.models import MealEntry
from tests.factories import StaffRoleFactory
from tests.faults import Fault, inject_fault
from tests.tools.world import build_world
from tools.dispatcher import AGAIN_POSSIBLE
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def add_rice(world, arguments=None, **kwargs):
    arguments = arguments or {
        "date": world.day(0),
        "meal": "dinner",
        "food_id": world.ids["food_id:rice_white"],
        "grams": 100,
    }
    return world.call("add_food_to_meal", arguments, **kwargs)


def dinner_entries(world):
    return MealEntry.objects.filter(member=world.member, meal="dinner").count()


def test_the_same_call_twice_has_one_effect(world):
    first = add_rice(world)
    second = add_rice(world, call_id="call-2")
    assert dinner_entries(world) == 1
    assert second.call_id == "call-2"
    assert second.payload == {
        "status": "duplicate",
        "first": dict(first.payload),
        "verification": "verified",
        "message": AGAIN_POSSIBLE,  # the model learns that ``again`` exists
    }
    log = ToolCallLog.objects.get(provider_call_id="call-2")
    assert log.duplicate_of.provider_call_id == "call-1"


def test_key_order_whitespace_and_number_format_do_not_matter(world):
    food_id = world.ids["food_id:rice_white"]
    add_rice(world)
    text = (
        f'{{ "grams" : 1.0e2, "food_id": {food_id}.0,\n "meal": "dinner", '
        f'"date": "{world.day(0)}" }}'
    )
    again = add_rice(world, text, call_id="call-2")
    assert again.status == "duplicate"
    assert dinner_entries(world) == 1


def test_different_arguments_are_a_different_action(world):
    add_rice(world)
    other = add_rice(
        world,
        {
            "date": world.day(0),
            "meal": "dinner",
            "food_id": world.ids["food_id:rice_white"],
            "grams": 101,
        },
        call_id="call-2",
    )
    assert other.status == "ok"
    assert dinner_entries(world) == 2


def test_after_ten_minutes_it_is_a_new_action(world):
    with time_machine.travel(
        datetime.datetime(2026, 12, 2, 12, 0, tzinfo=datetime.UTC)
    ):
        world.today = datetime.date(2026, 12, 2)
        add_rice(world)
    with time_machine.travel(
        datetime.datetime(2026, 12, 2, 12, 9, 59, tzinfo=datetime.UTC)
    ):
        assert add_rice(world, call_id="call-2").status == "duplicate"
    with time_machine.travel(
        datetime.datetime(2026, 12, 2, 12, 10, 1, tzinfo=datetime.UTC)
    ):
        assert add_rice(world, call_id="call-3").status == "ok"
    assert dinner_entries(world) == 2


def test_the_same_arguments_in_another_conversation_are_separate(world):
    add_rice(world)
    other = add_rice(world, conversation="conversation-2")
    assert other.status == "ok"
    assert dinner_entries(world) == 2


def test_a_refused_call_does_not_block_the_corrected_retry(world):
    arguments = {"session_id": world.ids["session_id:spinning"]}
    Booking.objects.create(
        business=world.business, member=world.member, session_id=arguments["session_id"]
    )
    refused = world.call("book_class", arguments)
    assert refused.status == "invalid_arguments"
    Booking.objects.filter(
        member=world.member, session_id=arguments["session_id"]
    ).delete()
    retried = world.call("book_class", arguments, call_id="call-2")
    assert retried.status == "ok"


def test_a_failure_with_proof_does_not_block_a_retry(world):
    with inject_fault("nutrition", Fault.STORAGE_FAILURE):
        assert add_rice(world).status == "failed"
    assert add_rice(world, call_id="call-2").status == "ok"
    assert dinner_entries(world) == 1


def test_an_unknown_outcome_blocks_a_repeat(world):
    with inject_fault("nutrition", Fault.TIMEOUT_AFTER_COMMIT):
        first = add_rice(world)
    again = add_rice(world, call_id="call-2")
    assert again.payload["status"] == "duplicate"
    assert again.payload["first"]["status"] == "unknown_outcome"
    assert again.payload["verification"] == "unverifiable"
    assert first.status == "unknown_outcome"
    assert dinner_entries(world) == 1


def test_a_pending_approval_blocks_a_repeat(world):
    offered = {"freeze_membership": "gated"}
    arguments = {"start": world.day(10), "end": world.day(19)}
    world.call("freeze_membership", arguments, offered=offered)
    again = world.call(
        "freeze_membership", arguments, offered=offered, call_id="call-2"
    )
    assert again.payload["first"]["status"] == "pending_approval"
    assert again.payload["verification"] == "not_applied"


def test_a_repeat_of_an_unknown_outcome_after_its_window_is_a_new_action(world):
    """A duplicate did nothing: it does not block later repeats (it carried its
    first's ``unverifiable``, so each repeat within ten minutes of the last
    renewed the window, and a later one answered a duplicate of a duplicate)."""
    noon = datetime.datetime(2026, 12, 2, 12, 0, tzinfo=datetime.UTC)
    world.today = datetime.date(2026, 12, 2)
    with time_machine.travel(noon):
        with inject_fault("nutrition", Fault.TIMEOUT_AFTER_COMMIT):
            first = add_rice(world)
    with time_machine.travel(noon + datetime.timedelta(minutes=8)):
        second = add_rice(world, call_id="call-2")
    with time_machine.travel(noon + datetime.timedelta(minutes=11)):
        third = add_rice(world, call_id="call-3")

    assert (first.status, second.status) == ("unknown_outcome", "duplicate")
    assert third.status == "ok"
    assert dinner_entries(world) == 2


@pytest.mark.parametrize("tool", ["freeze_membership", "book_class"])
def test_a_repeat_of_an_approved_request_done_since_is_a_duplicate(world, tool):
    """The repeat is the request already made: it is not checked again as a new
    one (the check refused it, the freeze overlapping itself or the member
    already booked, and the member was told nothing had been done); its first is
    the request's result as it stands now, its execution's (R7)."""
    offered = {tool: "gated"}
    arguments = (
        {"start": world.day(10), "end": world.day(19)}
        if tool == "freeze_membership"
        else {"session_id": world.ids["session_id:spinning"]}
    )
    first = world.call(tool, arguments, offered=offered)
    action_id = first.payload["pending_action"]
    staff = StaffRoleFactory(business=world.business, role="staff").user
    pending_action_approve(action_id=action_id, user=staff)
    assert pending_action_execute(action_id=action_id) == "succeeded"

    again = world.call(tool, arguments, offered=offered, call_id="call-2")

    executed = ToolCallLog.objects.get(provider_call_id="call-1")
    assert executed.result["status"] == "ok"
    assert again.payload == {
        "status": "duplicate",
        "first": executed.result,
        "verification": "verified",
    }
    assert ToolCallLog.objects.filter(expires_at__isnull=False).count() == 1


def test_a_repeat_of_a_waiting_request_is_a_duplicate_while_its_service_is_down(
    world,
):
    offered = {"freeze_membership": "gated"}
    arguments = {"start": world.day(10), "end": world.day(19)}
    world.call("freeze_membership", arguments, offered=offered)

    with inject_fault("memberships", Fault.UNAVAILABLE):
        again = world.call(
            "freeze_membership", arguments, offered=offered, call_id="call-2"
        )

    assert again.status == "duplicate"
    assert ToolCallLog.objects.filter(expires_at__isnull=False).count() == 1


def test_reads_are_not_deduplicated(world):
    world.call("search_foods", {"query": "arroz"})
    again = world.call("search_foods", {"query": "arroz"}, call_id="call-2")
    assert again.status == "ok"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_identical_calls_execute_once():
    world = build_world()
    arguments = {"session_id": world.ids["session_id:spinning"]}
    barrier = threading.Barrier(20)
    results = []

    def attempt(n):
        try:
            barrier.wait()
            results.append(world.call("book_class", arguments, call_id=f"call-{n}"))
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(r.status for r in results)
    assert statuses == ["duplicate"] * 19 + ["ok"]
    assert Booking.objects.filter(member=world.member, status="confirmed").count() == 2
    [done] = [r for r in results if r.status == "ok"]
    for result in results:
        if result.status == "duplicate":
            assert result.payload["first"] == dict(done.payload)
