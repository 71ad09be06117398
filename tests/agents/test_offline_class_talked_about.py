"""The demo model and the class just talked about (booked, or the only one
listed): its time, room and instructor asked about, another time of it booked,
and «no puedo ir» answered with how to cancel it, never a cancellation; and a
time said right after asking about a day, looked for on that day."""

from __future__ import annotations

import pytest

from gymnasia.classes.models import Booking, ClassSession
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    cancelled_told,
    classes_on_a_later_day,
    member_conversation,
    reply_to,
    with_one_booking,
)
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def test_who_teaches_and_where_is_the_class_just_booked(client, agent):
    """ "¿Quién da la clase?" right after a booking listed the week's classes and
    "¿En qué sala es?" was not understood; "cancélala" after them then had no
    class to cancel."""
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva spinning el {day}")

    who = reply_to(send(client, started, "¿Quién da la clase?"))
    where = reply_to(send(client, started, "¿En qué sala es?"))
    cancelled = reply_to(send(client, started, "Cancélala"))

    assert who == f"Spinning del {day} 09:00 la da Marta Gil."
    assert where == f"Spinning es el {day} 09:00 en Sala 1."
    assert cancelled == cancelled_told()
    assert Booking.objects.get(session=sessions[1]).status == "cancelled"
    assert ToolCallLog.objects.filter(tool_name="list_classes").count() == 1


def test_where_the_gym_is_is_no_question_of_the_class_just_listed(client, agent):
    """ "¿Dónde estáis?" right after a list of one class named that class's room."""
    day, _ = classes_on_a_later_day(agent, "Zumba")
    started = start(client, agent)
    send(client, started, f"¿Hay zumba el {day}?")

    reply = reply_to(send(client, started, "¿Dónde estáis?"))

    assert "Sala 1" not in reply
    assert reply.startswith("Eso no lo sé desde aquí: no tengo el horario ni la ")


def test_an_instructor_the_gym_did_not_name_is_said_to_be_unnamed(client, agent):
    day, sessions = classes_on_a_later_day(agent, "Yoga")
    ClassSession.objects.filter(pk=sessions[0].pk).update(instructor="")
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    send(client, started, f"Book yoga on {day}")

    reply = reply_to(send(client, started, "Who teaches it?"))

    assert reply == "The gym has not said who teaches that class."


def test_cannot_go_says_how_to_cancel_that_class_and_cancels_nothing(client, agent):
    """ "Al final no puedo ir" got the list of what the assistant can do; it is
    never taken for a cancellation on a guess."""
    started = with_one_booking(client, agent)
    day = Booking.objects.get().session.starts_at.astimezone(agent.business.zone)
    send(client, started, f"¿Hay yoga el {day.date()}?")

    reply = reply_to(send(client, started, "Vale, al final no puedo ir"))

    assert reply == (
        f"Si quieres cancelar tu plaza en Yoga el {day.date()} 08:00, dime «cancela "
        f"mi reserva de yoga del {day.date()}»."
    )
    assert Booking.objects.get().status == "confirmed"

    send(client, started, f"Cancela mi reserva de yoga del {day.date()}")

    assert Booking.objects.get().status == "cancelled"


def test_another_time_right_after_a_booking_books_that_class_too(client, agent):
    """ "Y también el de las 9" right after a booking got the list of what it can
    do."""
    day, sessions = classes_on_a_later_day(agent, "Spinning", "Spinning", "Yoga")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva spinning el {day} a las 8")

    reply = reply_to(send(client, started, "Y también el de las 9"))

    assert reply == f"Reserva confirmada: Spinning el {day} 09:00 en Sala 1."
    assert set(Booking.objects.values_list("session_id", flat=True)) == {
        sessions[0].pk,
        sessions[1].pk,
    }


@pytest.mark.parametrize(
    "asked", ["¿A qué hora es?", "¿A qué hora era?", "¿A qué hora empezaba?"]
)
def test_when_is_it_after_a_list_of_one_class_is_that_class(client, agent, asked):
    """ "¿A qué hora era?" got the list of what the assistant can do."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"¿Hay pilates el {day}?")

    reply = reply_to(send(client, started, asked))

    assert reply == f"Pilates es el {day} 09:00 en Sala 1."
    assert not Booking.objects.exists()


def test_when_is_it_after_a_booking_chosen_from_several_is_that_booking(client, agent):
    """The booking's turn also listed the day's two spinning classes: the one
    booked is meant, not "the only one listed"."""
    day, _ = classes_on_a_later_day(agent, "Spinning", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva spinning el {day} a las 9")

    when = reply_to(send(client, started, "¿A qué hora es?"))
    cannot = reply_to(send(client, started, "Al final no puedo ir"))

    assert when == f"Spinning es el {day} 09:00 en Sala 1."
    assert cannot.startswith(f"Si quieres cancelar tu plaza en Spinning el {day} 09:00")
    assert Booking.objects.get().status == "confirmed"


def test_a_time_said_after_a_day_with_none_of_that_kind_looks_on_that_day(
    client, agent
):
    """ "Apúntame a las 9" right after "¿hay pilates el …?" found none booked
    today's class at 9, whatever it was: it is that day's pilates that she
    means, and there is none."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    assert reply_to(send(client, started, f"¿Hay pilates el {day}?")) == (
        f"No hay clases de pilates el {day}."
    )

    reply = reply_to(send(client, started, "Apúntame a las 9"))

    assert reply == f"No hay clases de pilates a las 9 el {day}."
    assert not Booking.objects.exists()
