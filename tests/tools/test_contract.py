"""The contract of every published tool: a fixture call runs its handler against
test data, and the same call on two independently built gyms follows the same route
and gives the same result."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from tests.fakes.stripe_server import running_fake_stripe
from tests.tools.world import World, build_world
from tools.models import ToolCallLog
from tools.registry import published_registry

pytestmark = pytest.mark.django_db

# tool name → (arguments in a world, a check of the normalized result)
FIXTURES: dict[
    str, tuple[Callable[[World], dict[str, Any]], Callable[[dict[str, Any]], None]]
] = {}


def fixture(name: str, arguments: Callable[[World], dict[str, Any]]):
    def register(
        check: Callable[[dict[str, Any]], None],
    ) -> Callable[[dict[str, Any]], None]:
        FIXTURES[name] = (arguments, check)
        return check

    return register


@fixture("search_foods", lambda w: {"query": "Arroz"})
def _search_foods(result):
    assert result == {
        "status": "ok",
        "count": 2,
        "foods": [
            {
                "food_id": "rice_white",
                "name": "Arroz blanco (cocido)",
                "per_100g": {
                    "kcal": 130,
                    "carbohydrates_g": 28,
                    "protein_g": 5,
                    "fat_g": 2,
                },
            },
            {
                "food_id": "rice_brown",
                "name": "Arroz integral (cocido)",
                "per_100g": {
                    "kcal": 130,
                    "carbohydrates_g": 23.5,
                    "protein_g": 5,
                    "fat_g": 2,
                },
            },
        ],
    }


@fixture("get_meal_diary", lambda w: {"date": w.day(0)})
def _get_meal_diary(result):
    [entry] = result["entries"]
    assert entry["entry_id"] == "my_entry"
    assert (entry["food"], entry["grams"], entry["carbohydrates_g"]) == (
        "Arroz blanco (cocido)",
        150,
        42,
    )
    assert result["totals"]["carbohydrates_g"] == 42


@fixture(
    "add_food_to_meal",
    lambda w: {
        "date": w.day(0),
        "meal": "dinner",
        "food_id": w.ids["food_id:oats"],
        "grams": 40,
    },
)
def _add_food_to_meal(result):
    assert result["verification"] == "verified"
    assert result["entry"] == {
        "entry_id": "<new>",
        "date": result["entry"]["date"],
        "meal": "dinner",
        "food_id": "oats",
        "food": "Copos de avena",
        "grams": 40,
    }


@fixture("remove_meal_entry", lambda w: {"entry_id": w.ids["entry_id:my_entry"]})
def _remove_meal_entry(result):
    assert result["verification"] == "verified"
    assert result["removed"]["entry_id"] == "my_entry"


@fixture("list_classes", lambda w: {"date_from": w.day(1), "date_to": w.day(1)})
def _list_classes(result):
    listed = [
        (s["session_id"], s["places_left"], s["member_booked"])
        for s in result["sessions"]
    ]
    # The member's own place is marked; another member's is not hers.
    assert listed == [("spinning", 9, False), ("yoga", 0, False), ("pilates", 7, True)]


@fixture("list_my_bookings", lambda w: {})
def _list_my_bookings(result):
    assert [b["booking_id"] for b in result["bookings"]] == ["my_booking"]


@fixture("book_class", lambda w: {"session_id": w.ids["session_id:spinning"]})
def _book_class(result):
    assert result["verification"] == "verified"
    assert result["booking"]["session_id"] == "spinning"
    assert result["booking"]["status"] == "confirmed"


@fixture("cancel_booking", lambda w: {"booking_id": w.ids["booking_id:my_booking"]})
def _cancel_booking(result):
    assert result["verification"] == "verified"
    assert result["booking"]["status"] == "cancelled"


@fixture("get_membership", lambda w: {})
def _get_membership(result):
    assert result["membership"]["status"] == "active"
    assert result["membership"]["freezes"] == []
    assert result["membership"]["freezes_waiting_for_approval"] == []


@fixture("freeze_membership", lambda w: {"start": w.day(10), "end": w.day(19)})
def _freeze_membership(result):
    assert result["verification"] == "verified"
    assert result["freeze"]["days"] == 10


@fixture("list_payments", lambda w: {})
def _list_payments(result):
    assert [p["payment_id"] for p in result["payments"]] == ["monthly_fee", "towel"]
    assert result["payments"][1]["amount"] == 12.5


@fixture(
    "refund_payment",
    lambda w: {"payment_id": w.ids["payment_id:towel"], "amount": 12.5},
)
def _refund_payment(result):
    assert result["verification"] == "verified"
    assert result["refund"]["payment_id"] == "towel"
    assert result["refund"]["amount"] == 12.5


@fixture("handoff_to_staff", lambda w: {"reason": "Quiero hablar con una persona."})
def _handoff_to_staff(result):
    assert result["verification"] == "verified"
    assert result["handoff_id"] == "<id>"


def _a_class_asked_of_staff(world: World) -> dict[str, Any]:
    """The member asks for a class behind approval; ``list_my_requests`` takes
    no arguments."""
    session = world.ids["session_id:spinning"]
    world.call(
        "book_class",
        {"session_id": session},
        call_id="asked",
        offered={"book_class": "gated"},
    )
    return {}


@fixture("list_my_requests", _a_class_asked_of_staff)
def _list_my_requests(result):
    [request] = result["requests"]
    assert result["count"] == 1
    assert request["request_id"] == "<id>"
    assert (request["tool"], request["title"]) == ("book_class", "Book a class")
    assert request["about"].startswith("Book Spinning on ")
    assert request["about"].endswith(", 18:00, with Marta")
    assert request["facts"]["session"]["class"] == "Spinning"
    assert request["facts"]["session"]["starts_at"][11:16] == "18:00"
    assert (request["state"], request["decided_at"], request["reason"]) == (
        "waiting_for_staff",
        None,
        "",
    )


def test_contract_every_published_tool_has_a_fixture_call():
    assert sorted(FIXTURES) == sorted(published_registry().names())


@pytest.fixture
def stack():
    with contextlib.ExitStack() as stack:
        yield stack


def _route(result_call_id: str) -> list[str]:
    log = ToolCallLog.objects.get(provider_call_id=result_call_id)
    return [step["step"] for step in log.steps]


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_contract_fixture_call_same_route_and_result_in_two_gyms(name, stack):
    arguments, check = FIXTURES[name]
    outcomes = []
    for label in ("first", "second"):
        world = build_world()
        stripe = running_fake_stripe("sk_test_" + secrets.token_hex(12))
        world.connect_stripe(stack.enter_context(stripe))
        result = world.call(name, arguments(world), call_id=f"{name}-{label}")
        assert result.call_id == f"{name}-{label}"
        assert result.status == "ok", result.payload
        normalized = world.normalize(dict(result.payload))
        check(normalized)
        outcomes.append((_route(f"{name}-{label}"), normalized))
    assert outcomes[0] == outcomes[1]


REFUSALS = {
    "unknown name": ("search_foodz", lambda w: {"query": "arroz"}, "unknown_tool"),
    "nothing matched": ("search_foods", lambda w: {"query": "caviar"}, "no_results"),
    "wrong type": (
        "book_class",
        lambda w: {"session_id": "spinning"},
        "invalid_arguments",
    ),
    "extra property": (
        "get_membership",
        lambda w: {"member_id": w.member.pk},
        "invalid_arguments",
    ),
    "full class": (
        "book_class",
        lambda w: {"session_id": w.ids["session_id:yoga"]},
        "invalid_arguments",
    ),
    "another member's booking": (
        "cancel_booking",
        lambda w: {"booking_id": w.ids["booking_id:their_booking"]},
        "not_found",
    ),
    "another gym's session": (
        "book_class",
        lambda w: {"session_id": w.ids["session_id:foreign_session"]},
        "not_found",
    ),
    "freeze in the past": (
        "freeze_membership",
        lambda w: {"start": w.day(-3), "end": w.day(2)},
        "invalid_arguments",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_contract_refusals_same_route_and_result_in_two_gyms(case):
    name, arguments, status = REFUSALS[case]
    outcomes = []
    for label in ("first", "second"):
        world = build_world()
        call_id = f"{case}-{label}"
        result = world.call(name, arguments(world), call_id=call_id)
        assert result.status == status, result.payload
        outcomes.append((_route(call_id), world.normalize(dict(result.payload))))
    assert outcomes[0] == outcomes[1]
