"""The demo model and "deshaz eso" / "undo that", "quítalo", "remove it" right
after a change: the change just made is taken back (the food just logged taken
out, the class just booked cancelled), never another one."""

from __future__ import annotations

import pytest

from gymnasia.classes.models import Booking
from gymnasia.nutrition.models import MealEntry
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    cancelled_told,
    classes_on_a_later_day,
    member_conversation,
    reply_to,
)
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def _as(client, agent, sub):
    return start(client, agent, identity_token=identity(agent, sub=sub))


@pytest.mark.parametrize(
    ("sub", "logged", "taken_back", "told"),
    [
        (
            "socio-1001",
            "Añade 120 g de plátano a la merienda",
            "Deshaz eso",
            "Quitado: 120 g de Plátano de la merienda del ",
        ),
        (
            "socio-1001",
            "Añade 120 g de plátano a la merienda",
            "Quítalo",
            "Quitado: 120 g de Plátano de la merienda del ",
        ),
        (
            "socio-1003",
            "Add 120 g of banana to my snack",
            "undo that",
            "Removed: 120 g of Plátano from snack on ",
        ),
        (
            "socio-1003",
            "Add 120 g of banana to my snack",
            "remove it",
            "Removed: 120 g of Plátano from snack on ",
        ),
    ],
)
def test_undo_after_logging_a_food_takes_out_that_entry(
    client, agent, sub, logged, taken_back, told
):
    """With another entry of the same day in the diary, "quítalo" asked which of
    the two, and "deshaz eso" got the list of what the assistant can do."""
    started = _as(client, agent, sub)
    send(client, started, "Añade 100 g de arroz blanco a la comida")
    send(client, started, logged)

    reply = reply_to(send(client, started, taken_back))

    assert [e.food.name for e in MealEntry.objects.all()] == ["Arroz blanco (cocido)"]
    assert reply.startswith(told)


def test_undo_after_logging_two_foods_takes_out_both(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Añade 90 g de avena a mi desayuno")
    send(client, started, "Añade 100 g de arroz blanco y 150 g de pollo a la cena")

    reply = reply_to(send(client, started, "Deshaz eso"))

    assert [e.food.name for e in MealEntry.objects.all()] == ["Copos de avena"]
    removed = ToolCallLog.objects.filter(tool_name="remove_meal_entry")
    assert removed.count() == 2
    assert len({c.message_key for c in removed}) == 1  # one step, two calls
    assert reply.startswith("Quitado: 100 g de Arroz blanco (cocido) de la cena del ")
    assert "150 g de Pechuga de pollo a la plancha de la cena del " in reply


@pytest.mark.parametrize(
    ("sub", "undo", "language"),
    [
        ("socio-1001", "Deshaz eso", "es"),
        ("socio-1003", "Undo that", "en"),
    ],
)
def test_undo_after_booking_a_class_cancels_that_booking(
    client, agent, sub, undo, language
):
    day, [yoga, pilates] = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = _as(client, agent, sub)
    send(client, started, f"Reserva yoga el {day}")
    send(client, started, f"Reserva pilates el {day}")

    reply = reply_to(send(client, started, undo))

    assert reply == cancelled_told(language)
    assert {b.session_id: b.status for b in Booking.objects.all()} == {
        yoga.pk: "confirmed",
        pilates.pk: "cancelled",
    }


@pytest.mark.parametrize(
    ("sub", "said", "told"),
    [
        (
            "socio-1001",
            "Deshaz eso",
            "Solo puedo deshacer una comida que acabo de anotar o una clase que "
            "acabo de reservar.",
        ),
        (
            "socio-1003",
            "Undo that",
            "I can only undo a food I have just logged or a class I have just booked.",
        ),
    ],
)
def test_undo_with_no_change_just_made_changes_nothing(client, agent, sub, said, told):
    """After a read, or a change that was itself taking something away, nothing
    is taken back on a guess."""
    started = _as(client, agent, sub)
    send(client, started, "Añade 100 g de arroz blanco a la comida")
    send(client, started, "¿Qué clases hay mañana?")
    calls = ToolCallLog.objects.count()

    reply = reply_to(send(client, started, said))

    assert reply == told
    assert ToolCallLog.objects.count() == calls
    assert MealEntry.objects.count() == 1


def test_undo_after_a_refused_change_changes_nothing(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Añade 100 g de arroz blanco a la comida")
    send(client, started, "Añade -50 g de pollo a la cena")
    calls = ToolCallLog.objects.count()

    reply = reply_to(send(client, started, "Deshaz eso"))

    assert reply.startswith("Solo puedo deshacer")
    assert ToolCallLog.objects.count() == calls
    assert MealEntry.objects.count() == 1
