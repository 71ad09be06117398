"""A gated write is checked as its handler would check it before it is queued (R4):
staff are never asked to approve what could not be done, the member is told at once,
and the check itself changes nothing."""

from __future__ import annotations

import pytest
from django.utils import translation

from approvals.services import (
    pending_action_approve,
    pending_action_execute,
    pending_action_reject,
    pending_actions_expire,
)
from gymnasia.classes.models import Booking
from gymnasia.memberships.models import Membership, MembershipFreeze
from gymnasia.nutrition.models import MealEntry
from tests.factories import StaffRoleFactory
from tests.faults import Fault, inject_fault
from tools.models import ToolCallLog
from tools.presentation import call_steps_described
from tools.registry import (
    HANDLERS,
    VERIFIERS,
    RegistryMismatch,
    build_registry,
    published_registry,
)
from tools.specs import PUBLISHED

pytestmark = pytest.mark.django_db


def requests():
    """The calls that waited for staff (the requests)."""
    return ToolCallLog.objects.filter(expires_at__isnull=False)


def freeze(world, start, end, **kwargs):
    return world.call(
        "freeze_membership",
        {"start": world.day(start), "end": world.day(end)},
        offered={"freeze_membership": "gated"},
        **kwargs,
    )


def rows(world):
    """What a refused request must leave as it was."""
    membership = Membership.objects.get(member=world.member)
    return (
        requests().count(),
        MembershipFreeze.objects.count(),
        membership.ends_on,
        Booking.objects.count(),
        MealEntry.objects.count(),
    )


@pytest.mark.parametrize(
    ("start", "end", "status", "error"),
    [
        (19, 10, "invalid_arguments", "The freeze cannot end before it starts."),
        (-3, 5, "invalid_arguments", "A freeze cannot start in the past."),
        (10, 200, "invalid_arguments", "A freeze can last at most"),
    ],
)
def test_a_request_that_could_not_be_done_is_refused_not_queued(
    world, start, end, status, error
):
    before = rows(world)

    result = freeze(world, start, end)

    assert result.status == status
    assert result.payload["verification"] == "not_applied"
    assert result.payload["errors"][0].startswith(error)
    assert rows(world) == before
    log = ToolCallLog.objects.get()
    assert (log.gated, log.status) == (False, status)
    assert [s["step"] for s in log.steps] == [
        "offered",
        "validated",
        "duplicate",
        "checked",
    ]
    assert log.steps[-1]["error"] == "refused"


def test_a_request_overlapping_a_freeze_made_since_is_refused(world):
    """The check reads the member's state now: a freeze approved and made earlier
    makes an overlapping request impossible."""
    staff = StaffRoleFactory(business=world.business, role="staff").user
    first = ToolCallLog.objects.get(pk=freeze(world, 10, 19).payload["pending_action"])
    pending_action_approve(action_id=first.pk, user=staff)
    assert pending_action_execute(action_id=first.pk) == "succeeded"
    before = rows(world)

    result = freeze(world, 15, 25, conversation="conversation-2")

    assert result.status == "invalid_arguments"
    assert "overlaps the freeze" in result.payload["errors"][0]
    assert rows(world) == before


def staff_of(world):
    return StaffRoleFactory(business=world.business, role="staff").user


def test_a_request_overlapping_a_freeze_waiting_for_staff_is_refused(world):
    """Staff would approve one and see the other fail: the second is refused now,
    whatever conversation it comes from, and the member is told which days."""
    freeze(world, 10, 19)
    before = rows(world)

    result = freeze(world, 15, 25, conversation="conversation-2")

    assert result.status == "invalid_arguments"
    assert result.payload["errors"] == [
        f"It overlaps the freeze from {world.day(10)} to {world.day(19)}, which is "
        "waiting for the staff's approval."
    ]
    assert rows(world) == before
    assert ToolCallLog.objects.latest("created_at").steps[-1]["error"] == "refused"


@pytest.mark.parametrize(
    ("member", "start", "end"),
    [
        ("member", 20, 25),  # the days after
        ("member", 1, 9),  # the days before
        ("other_member", 10, 19),  # the same days, for someone else
    ],
)
def test_a_freeze_beside_a_waiting_one_is_queued(world, member, start, end):
    freeze(world, 10, 19)

    result = freeze(
        world, start, end, conversation="conversation-2", member=getattr(world, member)
    )

    assert result.status == "pending_approval"
    assert requests().filter(status="pending_approval").count() == 2


def test_the_membership_read_names_the_freezes_waiting_for_staff(world):
    """Hers, still to be decided or about to be made; not someone else's, not
    those rejected."""
    freeze(world, 10, 19)
    rejected = freeze(world, 30, 32, conversation="conversation-2")
    pending_action_reject(
        action_id=rejected.payload["pending_action"], user=staff_of(world)
    )
    freeze(world, 40, 42, conversation="conversation-3", member=world.other_member)

    result = world.call("get_membership", {})

    assert result.status == "ok"
    assert result.payload["membership"]["freezes_waiting_for_approval"] == [
        {"start": world.day(10), "end": world.day(19)}
    ]
    assert result.payload["membership"]["freezes"] == []


def test_the_same_request_again_is_a_duplicate_not_an_overlap(world):
    """R7 answers a repeated request in its conversation; the check leaves it be."""
    first = freeze(world, 10, 19)

    again = freeze(world, 10, 19, call_id="call-2")

    assert again.status == "duplicate"
    assert again.payload["first"]["pending_action"] == first.payload["pending_action"]
    assert requests().count() == 1


@pytest.mark.parametrize("decision", ["rejected", "expired", "approved"])
def test_a_request_decided_against_no_longer_blocks_its_days(world, decision):
    """Rejected or expired, a freeze will not be made: its days are free again.
    Approved, it is about to be made, and still blocks them."""
    first = ToolCallLog.objects.get(pk=freeze(world, 10, 19).payload["pending_action"])
    if decision == "approved":
        pending_action_approve(action_id=first.pk, user=staff_of(world))
    elif decision == "rejected":
        pending_action_reject(action_id=first.pk, user=staff_of(world))
    else:
        pending_actions_expire(now=first.expires_at)

    result = freeze(world, 15, 25, conversation="conversation-2")

    assert result.status == (
        "invalid_arguments" if decision == "approved" else "pending_approval"
    )


def test_a_request_that_can_be_done_is_queued_and_its_check_changed_nothing(world):
    """A freeze moves the membership's end; rehearsed, it moves nothing."""
    ends_on = Membership.objects.get(member=world.member).ends_on

    result = freeze(world, 10, 19)

    assert result.status == "pending_approval"
    assert MembershipFreeze.objects.count() == 0
    assert Membership.objects.get(member=world.member).ends_on == ends_on
    log = ToolCallLog.objects.get()
    assert [s["step"] for s in log.steps] == [
        "offered",
        "validated",
        "duplicate",
        "checked",
        "gated",
    ]
    assert log.steps[3] == {"step": "checked", "passed": True, "ms": log.steps[3]["ms"]}


@pytest.mark.parametrize(
    ("name", "arguments", "status"),
    [
        ("book_class", {"session_id": "yoga"}, "invalid_arguments"),  # full
        ("book_class", {"session_id": "pilates"}, "invalid_arguments"),  # booked
        ("book_class", {"session_id": "foreign_session"}, "not_found"),
        ("cancel_booking", {"booking_id": "their_booking"}, "not_found"),
        ("remove_meal_entry", {"entry_id": "their_entry"}, "not_found"),
        (
            "add_food_to_meal",
            {"food_id": "foreign_food", "grams": 100},
            "not_found",
        ),
    ],
)
def test_every_built_in_write_is_checked_before_it_waits(
    world, name, arguments, status
):
    arguments = {
        key: world.ids[f"{key}:{value}"] if key.endswith("_id") else value
        for key, value in arguments.items()
    }
    if name == "add_food_to_meal":
        arguments |= {"date": world.day(0), "meal": "lunch"}
    before = rows(world)

    result = world.call(name, arguments, offered={name: "gated"})

    assert (result.status, result.payload["verification"]) == (status, "not_applied")
    assert rows(world) == before


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("book_class", {"session_id": "spinning"}),
        ("cancel_booking", {"booking_id": "my_booking"}),
        ("remove_meal_entry", {"entry_id": "my_entry"}),
    ],
)
def test_a_built_in_write_that_can_be_done_waits_and_nothing_changed(
    world, name, arguments
):
    arguments = {key: world.ids[f"{key}:{value}"] for key, value in arguments.items()}
    bookings = sorted(Booking.objects.values_list("pk", "status"))
    entries = sorted(MealEntry.objects.values_list("pk", flat=True))

    result = world.call(name, arguments, offered={name: "gated"})

    assert result.status == "pending_approval"
    assert sorted(Booking.objects.values_list("pk", "status")) == bookings
    assert sorted(MealEntry.objects.values_list("pk", flat=True)) == entries


def test_an_integration_that_cannot_be_read_refuses_the_request_as_unavailable(world):
    before = rows(world)

    with inject_fault("memberships", Fault.UNAVAILABLE):
        result = freeze(world, 10, 19)

    assert result.status == "unavailable"
    assert rows(world) == before


def test_a_fault_meant_for_the_write_is_kept_for_it_not_spent_on_the_check(world):
    """The check's rehearsed write is not the write: a storage failure of the next
    write strikes the approved execution, not the check."""
    staff = StaffRoleFactory(business=world.business, role="staff").user

    with inject_fault("memberships", Fault.STORAGE_FAILURE, times=1):
        result = freeze(world, 10, 19)
        assert result.status == "pending_approval"
        action = requests().get()
        pending_action_approve(action_id=action.pk, user=staff)
        assert pending_action_execute(action_id=action.pk) == "failed"

    assert MembershipFreeze.objects.count() == 0


@pytest.mark.parametrize(
    ("amount", "status", "waiting"),
    [(20, "invalid_arguments", 0), (5, "pending_approval", 1)],
)
def test_a_refund_is_checked_against_what_is_left_and_nothing_is_refunded(
    world, stripe, amount, status, waiting
):
    """The towel cost 12.50: 20 is refused before staff see it; 5 waits for them.
    Either way, no refund reaches Stripe."""
    world.connect_stripe(stripe)
    arguments = {"payment_id": world.ids["payment_id:towel"], "amount": amount}

    result = world.call(
        "refund_payment", arguments, offered={"refund_payment": "gated"}
    )

    assert result.status == status
    if status == "invalid_arguments":
        assert result.payload["errors"] == [
            "At most 12.5 EUR of this payment can still be refunded."
        ]
    assert requests().count() == waiting
    assert stripe.refund_posts() == []


def test_a_refund_is_checked_against_what_waits_for_staff(world, stripe):
    """10 of the towel's 12.50 wait for staff: 5 more could never all be refunded,
    2.50 can; another payment is not touched by it."""
    world.connect_stripe(stripe)
    towel = world.ids["payment_id:towel"]

    def refund(payment_id, amount, call_id):
        return world.call(
            "refund_payment",
            {"payment_id": payment_id, "amount": amount},
            call_id=call_id,
            offered={"refund_payment": "gated"},
        )

    assert refund(towel, 10, "call-1").status == "pending_approval"
    too_much = refund(towel, 5, "call-2")

    assert too_much.status == "invalid_arguments"
    assert too_much.payload["errors"] == [
        "At most 2.5 EUR of this payment can still be refunded: refunds of 10 EUR "
        "more are waiting for the staff's approval."
    ]
    assert requests().count() == 1
    assert refund(towel, 2.5, "call-3").status == "pending_approval"
    assert refund(world.ids["payment_id:monthly_fee"], 40, "call-4").status == (
        "pending_approval"
    )
    assert requests().count() == 3
    assert stripe.refund_posts() == []


def test_an_automatic_write_is_not_checked_twice(world):
    """Its handler checks it as it runs: no rehearsal first."""
    world.call(
        "book_class",
        {"session_id": world.ids["session_id:spinning"]},
        offered={"book_class": "auto"},
    )
    log = ToolCallLog.objects.get()
    assert "checked" not in [s["step"] for s in log.steps]
    assert log.status == "ok"


def test_the_check_step_reads_in_words():
    steps = [
        {"step": "checked", "passed": True},
        {"step": "checked", "error": "refused"},
    ]
    with translation.override("en"):
        assert call_steps_described(steps) == [
            "checked before approval: can be done",
            "checked before approval: cannot be done (the gym's rules do not allow it)",
        ]
    with translation.override("es"):
        assert call_steps_described(steps) == [
            "comprobado antes de aprobar: se puede hacer",
            "comprobado antes de aprobar: no se puede hacer (las reglas del gimnasio "
            "no lo permiten)",
        ]


def test_a_check_of_a_read_or_of_no_published_tool_cannot_start():
    def check(ctx, args):
        return None

    with pytest.raises(RegistryMismatch) as refused:
        build_registry(
            PUBLISHED,
            HANDLERS,
            VERIFIERS,
            {"search_foods": check, "launch_rocket": check},
        )
    assert str(refused.value) == (
        "check of a tool that is not a published write: search_foods; "
        "check of a tool that is not a published write: launch_rocket"
    )


def test_every_write_but_the_handoff_has_a_check():
    registry = published_registry()
    unchecked = [t.name for t in registry if t.is_write and t.check is None]
    assert unchecked == ["handoff_to_staff"]
