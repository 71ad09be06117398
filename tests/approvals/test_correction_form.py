"""The correction form offers only what could be valid: for a class, the
upcoming sessions of that class type at the request's gym with a free place
(the one asked for included and selected); anything else posted is refused with
a clear message and changes nothing."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone, translation

from approvals.forms import CorrectionForm
from gymnasia.classes.models import Booking, ClassSession
from tests.factories import ClassSessionFactory, MemberFactory
from tools.models import ToolCallLog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]


@pytest.fixture
def spinning(world):
    """The request's session and others of its type: one later with room, one
    full, one cancelled, one already begun, and one of another gym."""
    asked = ClassSession.objects.get(pk=world.ids["session_id:spinning"])
    kind = asked.class_type

    def session(hours: float, **extra) -> ClassSession:
        starts = asked.starts_at + datetime.timedelta(hours=hours)
        return ClassSessionFactory(
            business=world.business, class_type=kind, starts_at=starts, **extra
        )

    later = session(24)
    full = session(48, capacity=1)
    Booking.objects.create(
        business=world.business,
        member=MemberFactory(business=world.business),
        session=full,
    )
    session(72, is_cancelled=True)
    begun = ClassSessionFactory(
        business=world.business,
        class_type=kind,
        starts_at=timezone.now() - datetime.timedelta(minutes=10),
    )
    foreign = ClassSessionFactory(business=world.foreign_member.business)
    return {
        "asked": asked,
        "later": later,
        "full": full,
        "begun": begun,
        "foreign": foreign,
    }


@pytest.fixture
def booking_request(world):
    result = world.call(
        "book_class",
        {"session_id": world.ids["session_id:spinning"]},
        offered={"book_class": "gated"},
    )
    assert result.status == "pending_approval", result.payload
    return ToolCallLog.objects.get(pk=result.payload["pending_action"])


def test_a_class_is_chosen_among_upcoming_sessions_of_its_type_with_room(
    world, spinning, booking_request
):
    form = CorrectionForm(booking_request)

    field = form.fields["session_id"]
    assert [value for value, _ in field.choices] == [
        spinning["asked"].pk,
        spinning["later"].pk,
    ]
    assert all(label.startswith("Spinning, ") for _, label in field.choices)
    assert field.initial == spinning["asked"].pk
    assert (
        "selected"
        in str(form["session_id"]).split(f'value="{spinning["asked"].pk}"')[1][:12]
    )


@pytest.mark.parametrize("which", ["full", "begun", "foreign"])
def test_a_session_not_offered_is_refused_and_changes_nothing(
    staff_client, spinning, booking_request, row_counts, which
):
    before = row_counts()

    response = staff_client.post(
        f"/inbox/{booking_request.pk}/correct",
        {"session_id": spinning[which].pk},
        follow=True,
    )

    assert row_counts() == before
    booking_request.refresh_from_db()
    assert booking_request.status == "pending_approval"
    assert "Select a valid choice" in response.content.decode() or (
        "Escoja una opción válida" in response.content.decode()
    )


def test_another_session_with_room_is_a_correction(
    staff_client, spinning, booking_request
):
    staff_client.post(
        f"/inbox/{booking_request.pk}/correct", {"session_id": spinning["later"].pk}
    )

    booking_request.refresh_from_db()
    assert booking_request.status == "superseded"
    corrected = ToolCallLog.objects.get(status="pending_approval")
    assert corrected.arguments == {"session_id": spinning["later"].pk}


def test_a_meal_is_chosen_by_name_and_a_date_with_a_picker(world):
    result = world.call(
        "add_food_to_meal",
        {
            "date": world.day(0),
            "meal": "lunch",
            "food_id": world.ids["food_id:rice_white"],
            "grams": 100,
        },
        offered={"add_food_to_meal": "gated"},
    )
    request = ToolCallLog.objects.get(pk=result.payload["pending_action"])

    with translation.override("en"):
        form = CorrectionForm(request)

    assert "again" not in form.fields
    assert ("lunch", "Lunch") in form.fields["meal"].choices
    assert 'type="date"' in str(form["date"])
    foods = dict(form.fields["food_id"].choices)
    assert foods[world.ids["food_id:rice_white"]] == "Arroz blanco (cocido)"
    assert world.ids["food_id:foreign_food"] not in foods
    assert 'type="number"' in str(form["grams"])
