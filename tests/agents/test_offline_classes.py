"""The demo model and classes: a day's list, booking from it (automatic or
waiting for staff, as the agent's settings say), a repeat deduplicated, her
bookings, and a visitor asked to sign in."""

from __future__ import annotations

import pytest

from gymnasia.classes.models import Booking
from tests.agents.api_client import start
from tests.agents.offline_kit import (
    at,
    calls,
    member_conversation,
    talk,
    weekday_ahead,
)
from tools.models import AgentToolSetting, ToolCallLog

pytestmark = pytest.mark.django_db


def test_a_days_classes_are_listed_from_one_read(client, agent):
    day = weekday_ahead(agent).isoformat()

    [listed] = talk(
        client, member_conversation(client, agent), f"¿Qué clases hay el {day}?"
    )

    assert calls() == [("list_classes", {"date_from": day, "date_to": day})]
    assert listed.startswith("Clases:\n")
    assert f"- Spinning {at(day, '07:30')} (Sala ciclo, 20 plazas libres)" in listed
    assert f"- Spinning {at(day, '19:00')} (Sala ciclo, 20 plazas libres)" in listed


def test_the_first_of_the_list_is_booked(client, agent):
    started = member_conversation(client, agent)
    day = weekday_ahead(agent).isoformat()

    _, told = talk(client, started, f"¿Qué clases hay el {day}?", "Reserva la primera")

    booking = Booking.objects.select_related("session__class_type").get()
    assert booking.status == "confirmed"
    assert told == f"Reserva confirmada: Spinning el {at(day, '07:30')} en Sala ciclo."


def test_the_class_at_a_time_said_is_booked(client, agent):
    started = member_conversation(client, agent)
    day = weekday_ahead(agent).isoformat()

    _, told = talk(
        client, started, f"¿Qué clases hay el {day}?", "Apúntame a la de las 19:00"
    )

    assert told == f"Reserva confirmada: Spinning el {at(day, '19:00')} en Sala ciclo."


def test_a_kind_day_and_time_in_one_message_books_that_class(client, agent):
    day = weekday_ahead(agent).isoformat()

    [told] = talk(
        client,
        member_conversation(client, agent),
        f"Reserva spinning el {day} a las 19:00",
    )

    assert [name for name, _ in calls()] == ["list_classes", "book_class"]
    assert told == f"Reserva confirmada: Spinning el {at(day, '19:00')} en Sala ciclo."


def test_a_gated_booking_waits_for_staff_and_books_nothing(client, agent):
    AgentToolSetting.objects.filter(agent=agent, tool_name="book_class").update(
        mode="gated"
    )
    started = member_conversation(client, agent)
    day = weekday_ahead(agent).isoformat()

    _, told = talk(client, started, f"¿Qué clases hay el {day}?", "Reserva la primera")

    assert not Booking.objects.exists()
    assert told.startswith("He enviado tu solicitud al equipo del gimnasio")
    assert told.endswith(
        f"La reserva de Spinning el {at(day, '07:30')} queda pendiente de que el equipo "
        "la apruebe."
    )


def test_the_same_booking_asked_again_is_told_as_already_done(client, agent):
    started = member_conversation(client, agent)
    day = weekday_ahead(agent).isoformat()

    *_, again = talk(
        client,
        started,
        f"¿Qué clases hay el {day}?",
        "Reserva la primera",
        "Reserva la primera",
    )

    assert Booking.objects.count() == 1
    assert (
        ToolCallLog.objects.filter(tool_name="book_class").last().result["status"]
        == "duplicate"
    )
    assert again.startswith("Eso ya estaba hecho; no lo he repetido.")


def test_her_bookings_and_a_cancellation(client, agent):
    started = member_conversation(client, agent)
    day = weekday_ahead(agent).isoformat()

    none, *_, mine, cancelled = talk(
        client,
        started,
        "¿Qué clases tengo?",
        f"¿Qué clases hay el {day}?",
        "Reserva la primera",
        "¿Qué clases tengo?",
        "Cancela la de las 07:30",
    )

    assert none == "No tienes ninguna reserva de clases por venir."
    assert mine == f"Tus reservas:\n- Spinning {at(day, '07:30')} (Sala ciclo)"
    assert cancelled == f"Reserva cancelada: Spinning el {at(day, '07:30')}."
    assert Booking.objects.get().status == "cancelled"


@pytest.mark.parametrize(
    ("sub", "asked", "listed"),
    [
        ("socio-1001", "¿Qué clases tengo?", "Tus reservas:"),
        ("socio-1001", "What classes do I have?", "Your bookings:"),
        ("socio-1003", "What classes do I have?", "Your bookings:"),
        ("socio-1003", "¿Qué clases tengo?", "Tus reservas:"),
    ],
)
def test_her_bookings_asked_in_either_language_are_listed_in_it(
    client, agent, sub, asked, listed
):
    """«What classes do I have?» lists her bookings as «¿Qué clases tengo?» does
    (it listed the day's schedule), and the answer is in the language of the
    question, whichever the conversation's."""
    started = member_conversation(client, agent, sub=sub)
    day = weekday_ahead(agent).isoformat()
    talk(client, started, f"¿Qué clases hay el {day}?", "Reserva la primera")

    [mine] = talk(client, started, asked)

    assert calls()[-1] == ("list_my_bookings", {})
    language = "es" if asked.startswith("¿") else "en"
    assert mine == f"{listed}\n- Spinning {at(day, '07:30', language)} (Sala ciclo)"


def test_a_message_that_does_not_tell_its_language_is_answered_in_hers(client, agent):
    """«ok» is no language: the conversation's (Emma's English) is kept."""
    [told] = talk(client, member_conversation(client, agent, sub="socio-1003"), "ok")

    assert told.startswith("I can help you with")


def test_a_visitor_asking_for_her_classes_is_asked_to_sign_in(client, agent):
    [told] = talk(client, start(client, agent), "¿Qué clases tengo?")

    assert told == (
        "Para eso necesito saber quién eres: entra con tu cuenta en la web del "
        "gimnasio y vuelve a preguntármelo."
    )
    assert not ToolCallLog.objects.exists()


def test_a_class_that_fits_twice_is_asked_which_and_the_answer_books_it(client, agent):
    started = member_conversation(client, agent, sub="socio-1003")
    day = weekday_ahead(agent)
    weekday = day.strftime("%A")

    asked, told = talk(
        client, started, f"Book me into {weekday}'s spinning class", "the one at 19:00"
    )

    assert asked == (
        "Which class? Tell me its time or its place in the list:\n"
        f"- Spinning {at(day, '07:30', 'en')}\n- Spinning {at(day, '19:00', 'en')}"
    )
    assert told == (
        f"Booking confirmed: Spinning on {at(day, '19:00', 'en')} in Sala ciclo."
    )
    assert Booking.objects.count() == 1
