"""The demo model and classes: it lists a day's classes and books the one the
member pointed at, never one under way, never on a question or a refusal."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from gymnasia.classes.models import Booking, ClassSession, ClassType
from gymnasia.gyms.models import Member
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    LATER,
    cancelled_told,
    classes_on_a_later_day,
    member_conversation,
    reply_to,
)
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def test_book_the_first_books_the_first_of_the_list_just_shown(client, agent):
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")

    reply = reply_to(send(client, started, "Reserva la primera"))

    assert Booking.objects.get().session_id == sessions[0].pk
    assert reply.startswith("Reserva confirmada: Yoga el ")


def test_book_the_last_of_the_list_just_shown(client, agent):
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"What classes are there on {day}?")

    reply = reply_to(send(client, started, "Book the last one"))

    assert Booking.objects.get().session_id == sessions[-1].pk
    assert reply.startswith("Reserva confirmada: Pilates el ")  # her language


def test_a_place_the_list_does_not_have_books_nothing(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    calls = ToolCallLog.objects.count()

    reply = reply_to(send(client, started, "Reserva la tercera"))

    assert reply == "En esa lista no hay tantas clases."
    assert ToolCallLog.objects.count() == calls  # nothing proposed
    assert not Booking.objects.exists()


def test_a_class_under_way_is_neither_listed_nor_booked(client, agent):
    """ "The first class of today" is one still to come, never one under way."""
    now = timezone.now()
    under_way = ClassSession.objects.create(
        business=agent.business,
        class_type=ClassType.objects.filter(business=agent.business).first(),
        starts_at=now - datetime.timedelta(minutes=1),
        ends_at=now + datetime.timedelta(minutes=44),
        capacity=10,
        instructor="Marta Gil",
        room="Sala 1",
    )
    started = member_conversation(client, agent)

    send(client, started, "Reserva la primera clase de hoy")

    # Late in the day nothing may be left to list: then the list is empty, which
    # it would not be if the class under way were in it.
    listed = ToolCallLog.objects.get(tool_name="list_classes").result.get(
        "sessions", []
    )
    assert under_way.pk not in [s["session_id"] for s in listed]
    assert not Booking.objects.filter(session=under_way).exists()
    assert all(b.session.starts_at > now for b in Booking.objects.all())


def test_the_classes_the_gym_has_are_its_list_not_her_bookings(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, f"What classes do you have on {day}?"))

    assert reply.startswith("Clases:")
    assert f"Yoga {day} 08:00" in reply
    asked = ToolCallLog.objects.get()
    assert asked.tool_name == "list_classes"


def test_asking_twice_for_the_same_booking_says_she_has_a_place(client, agent):
    """The list says which classes are hers: the second request books nothing
    and tells her she already has that place."""
    day, sessions = classes_on_a_later_day(agent, "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva spinning el {day}")

    reply = reply_to(send(client, started, f"Reserva spinning el {day}"))

    assert reply.startswith("Ya tienes plaza en esa clase: Spinning el ")
    assert Booking.objects.get().session_id == sessions[0].pk
    assert ToolCallLog.objects.filter(tool_name="book_class").count() == 1


def test_a_list_of_classes_marks_those_she_has_a_place_in(client, agent):
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la segunda")

    listed = reply_to(send(client, started, f"¿Qué clases hay el {day}?"))
    again = reply_to(send(client, started, "Reserva la segunda"))

    yoga, spinning = listed.splitlines()[1:]
    assert yoga.endswith("plazas libres)")
    assert spinning.endswith("ya tienes plaza)")
    assert again.startswith("Ya tienes plaza en esa clase: Spinning el ")
    assert Booking.objects.get().session_id == sessions[1].pk


def test_a_refusal_reaches_her_in_her_language_where_the_app_has_its_words(
    client, agent
):
    """The class filled up between the list and her request: the tool says so in
    English, for the model; she reads it in Spanish."""
    day, [session] = classes_on_a_later_day(agent, "Spinning")
    ClassSession.objects.filter(pk=session.pk).update(capacity=1)
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    other = Member.objects.get(external_id="socio-1002")
    Booking.objects.create(business=agent.business, member=other, session=session)

    reply = reply_to(send(client, started, "Reserva la primera"))

    assert reply.endswith("No se ha podido: Esa clase está completa.")
    refused = ToolCallLog.objects.get(tool_name="book_class").result
    assert refused["errors"] == ["This class is full."]


def test_asking_whether_a_named_class_can_be_booked_books_it(client, agent):
    """A question that names the class is a request: a real model would book it."""
    day, [yoga] = classes_on_a_later_day(agent, "Yoga")
    started = member_conversation(client, agent)

    send(client, started, f"¿Puedo reservar yoga el {day}?")

    assert Booking.objects.get().session_id == yoga.pk


def test_a_class_named_without_the_word_class_is_listed(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga")
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, f"¿Hay yoga el {day}?"))

    assert reply.startswith(f"Clases:\n- Yoga {day} 08:00 (Sala 1, 10 plazas libres)")
    assert not Booking.objects.exists()


def test_booking_a_class_the_day_does_not_have_says_so(client, agent):
    """Not "no free places": there is no such class that day."""
    day, _ = classes_on_a_later_day(agent, "Yoga")
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, f"Apúntame a pilates el {day}"))

    assert reply == f"No hay clases de pilates el {day}."
    assert not Booking.objects.exists()


def test_a_kind_the_list_shown_lacks_is_looked_for_on_that_lists_day(client, agent):
    """ "Book the pilates one" after another day's list without pilates: that
    day's pilates is looked for, not today's (it would have booked today's)."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")

    reply = reply_to(send(client, started, "Reserva la de pilates"))

    looked = ToolCallLog.objects.filter(tool_name="list_classes").latest("created_at")
    assert looked.arguments == {
        "date_from": day,
        "date_to": day,
        "class_type": "pilates",
    }
    assert reply == f"No hay clases de pilates el {day}."
    assert not Booking.objects.exists()


@pytest.mark.parametrize(
    "said",
    [
        "Quiero apuntarme a pilates el {day}",
        "Me apunto a pilates el {day}",
        "Quiero inscribirme en pilates el {day}",
        "Sign up for pilates on {day}",
    ],
)
def test_the_ways_members_ask_for_a_place_book_it(client, agent, said):
    """ "Quiero apuntarme a pilates el …" got the list of what it can do."""
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said.format(day=day)))

    assert reply == f"Reserva confirmada: Pilates el {day} 09:00 en Sala 1."
    assert Booking.objects.get().session_id == sessions[1].pk


def test_a_kind_another_kinds_list_lacks_is_looked_for_over_the_week(client, agent):
    """ "Resérvame la primera de yoga" after the week's yoga, then another day's
    pilates: it looked for yoga on the pilates list's day only, and found none."""
    day, _ = classes_on_a_later_day(agent, "Pilates")
    started = member_conversation(client, agent)
    send(client, started, "¿Hay yoga esta semana?")
    send(client, started, f"¿Y pilates el {day}?")

    reply = reply_to(send(client, started, "Resérvame la primera de yoga"))

    soonest = (
        ClassSession.objects.filter(
            class_type__name="Yoga", starts_at__gt=timezone.now()
        )
        .order_by("starts_at")
        .first()
    )
    assert Booking.objects.get().session == soonest
    assert reply.startswith("Reserva confirmada: Yoga el ")


def test_a_time_said_after_a_list_books_that_lists_class(client, agent):
    """ "The one at 9" after another day's list: that day's, not today's."""
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")

    reply = reply_to(send(client, started, "Reserva la de las 9"))

    assert Booking.objects.get().session_id == sessions[1].pk
    assert reply == f"Reserva confirmada: Spinning el {day} 09:00 en Sala 1."


def test_a_time_the_list_shown_lacks_says_so_for_that_day(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    calls = ToolCallLog.objects.count()

    reply = reply_to(send(client, started, "Reserva la de las 19:30"))

    assert reply == f"No hay ninguna clase a las 19:30 el {day}."
    assert ToolCallLog.objects.count() == calls  # the list was enough
    assert not Booking.objects.exists()


def test_a_kind_past_the_lines_shown_is_booked_on_that_lists_day(client, agent):
    """The list shows a day's first classes; the one named after them is that
    day's too."""
    day, sessions = classes_on_a_later_day(agent, *["Yoga"] * 12, "Pilates")
    started = member_conversation(client, agent)
    listed = reply_to(send(client, started, f"¿Qué clases hay el {day}?"))
    assert listed.count("- Yoga") == 12 and "Pilates" not in listed
    # The list says it is cut short (it read as the whole day).
    assert listed.endswith("\nY 1 más: dime una clase o un día para acotar la lista.")

    reply = reply_to(send(client, started, "Reserva la de pilates"))

    assert Booking.objects.get().session_id == sessions[-1].pk
    assert reply == f"Reserva confirmada: Pilates el {day} 20:00 en Sala 1."


def test_sign_me_up_for_the_first_one_books_it(client, agent):
    day, [yoga] = classes_on_a_later_day(agent, "Yoga")
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    send(client, started, f"What classes are there on {day}?")

    reply = reply_to(send(client, started, "Sign me up for the first one"))

    assert reply.startswith("Booking confirmed: Yoga on ")
    assert Booking.objects.get().session_id == yoga.pk


@pytest.mark.parametrize("said", ["Reserva la clase 99999", "Reserva una clase"])
def test_a_class_not_singled_out_is_asked_about_never_guessed(client, agent, said):
    """Nothing says which class: it used to book the day's first, and would book
    the day's only one left. She is asked which class and which day."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert reply == "¿Qué clase y qué día? Por ejemplo: «reserva spinning el jueves»."
    assert not Booking.objects.exists()
    assert not ToolCallLog.objects.exists()


def test_several_classes_of_a_day_named_are_asked_about(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, f"Reserva una clase el {day}"))

    assert reply == (
        f"Hay varias: Yoga {day} 08:00, Pilates {day} 09:00. ¿Cuál reservo? "
        f"Dímelo con su hora, por ejemplo: «reserva yoga el {day} a las 08:00»."
    )
    assert not Booking.objects.exists()


def test_two_classes_of_a_kind_that_day_are_asked_about_then_the_time_said_books(
    client, agent
):
    day, sessions = classes_on_a_later_day(agent, "Spinning", "Spinning")
    started = member_conversation(client, agent)

    asked = reply_to(send(client, started, f"Reserva spinning el {day}"))

    assert asked == (
        f"Hay varias: Spinning {day} 08:00, Spinning {day} 09:00. ¿Cuál reservo? "
        f"Dímelo con su hora, por ejemplo: «reserva spinning el {day} a las 08:00»."
    )
    assert not Booking.objects.exists()

    booked = reply_to(send(client, started, f"Reserva spinning el {day} a las 9"))

    assert Booking.objects.get().session_id == sessions[1].pk
    assert booked == f"Reserva confirmada: Spinning el {day} 09:00 en Sala 1."


def test_no_class_of_the_kind_asked_about_says_which_kind_and_day(client, agent):
    day, _ = classes_on_a_later_day(agent, "Spinning")
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, f"¿Hay yoga el {day}?"))

    assert reply == f"No hay clases de yoga el {day}."


def test_a_kind_named_after_a_list_books_that_class_of_the_list(client, agent):
    """ "Book the pilates one" after another day's classes: that day's pilates,
    not today's (it answered that there was no such class)."""
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    send(client, started, f"What classes are there on {day}?")

    reply = reply_to(send(client, started, "Book the pilates one"))

    assert Booking.objects.get().session_id == sessions[1].pk
    assert reply == f"Booking confirmed: Pilates on {day} 09:00 in Sala 1."


def test_the_first_with_no_list_shown_is_asked_about_never_guessed(client, agent):
    """It booked the day's first class."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Reserva la primera"))

    assert reply.startswith("¿La primera de qué clases? Pregúntame antes")
    assert not Booking.objects.exists()
    assert not ToolCallLog.objects.exists()


def test_food_put_down_for_a_meal_is_not_a_booking(client, agent):
    """ "Apúntame 200 gramos de pollo en la comida" was taken for a class to
    book."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Apúntame 200 gramos de pollo en la comida"))

    assert reply.startswith("Anotado: 200 g de Pechuga de pollo a la plancha en la ")
    assert not ToolCallLog.objects.filter(tool_name="list_classes").exists()


def test_a_day_said_after_a_list_of_one_kind_books_that_kind_that_day(client, agent):
    """ "Reserva la del miércoles" after a list of spinning classes asked which of
    all Wednesday's classes she meant."""
    day, _ = classes_on_a_later_day(agent, "Spinning")
    other_day, sessions = classes_on_a_later_day(
        agent, "Pilates", "Spinning", later=LATER + 1
    )
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases de spinning hay el {day}?")

    reply = reply_to(send(client, started, f"Reserva la del {other_day}"))

    assert reply == f"Reserva confirmada: Spinning el {other_day} 09:00 en Sala 1."
    assert Booking.objects.get().session_id == sessions[1].pk


@pytest.mark.parametrize(
    "said", ["Apúntame", "Resérvamela", "Book me in", "Quiero apuntarme", "Me apunto"]
)
def test_book_me_after_a_list_of_one_class_books_that_class(client, agent, said):
    """ "Apúntame" right after «¿Hay pilates el …?» listed one class asked her
    which class and which day."""
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"¿Hay pilates el {day}?")

    reply = reply_to(send(client, started, said))

    assert reply == f"Reserva confirmada: Pilates el {day} 09:00 en Sala 1."
    assert Booking.objects.get().session_id == sessions[1].pk


def test_book_a_class_after_a_list_of_one_still_asks_which(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"¿Hay pilates el {day}?")

    reply = reply_to(send(client, started, "Reserva una clase"))

    assert reply.startswith("¿Qué clase y qué día?")
    assert not Booking.objects.exists()


def test_a_spin_class_is_a_spinning_class(client, agent):
    """ "Any spin classes on …?" listed every class of the day, and "cancel the
    spin one" was not understood."""
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)

    listed = reply_to(send(client, started, f"Any spin classes on {day}?"))
    send(client, started, "Book the first one")
    cancelled = reply_to(send(client, started, "Cancel the spin one"))

    assert listed == f"Clases:\n- Spinning {day} 09:00 (Sala 1, 10 plazas libres)"
    assert cancelled == cancelled_told()
    assert Booking.objects.get().session_id == sessions[1].pk
    assert Booking.objects.get().status == "cancelled"


@pytest.mark.parametrize("said", ["Book it", "Apúntame"])
def test_book_me_after_a_list_of_one_kind_asks_which_of_them(client, agent, said):
    """ "Book it" right after a list of two pilates classes asked which class and
    which day, as if nothing had been listed."""
    day, _ = classes_on_a_later_day(agent, "Pilates", "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"¿Hay pilates el {day}?")

    reply = reply_to(send(client, started, said))

    assert reply.startswith(
        f"Hay varias: Pilates {day} 08:00, Pilates {day} 10:00. ¿Cuál reservo?"
    )
    assert not Booking.objects.exists()


@pytest.mark.parametrize(
    ("sub", "said", "told"),
    [
        (
            "socio-1001",
            "Reserva yoga el jueves y pilates el viernes",
            "Las clases se reservan de una en una: dime primero una, por ejemplo "
            "«reserva yoga el jueves».",
        ),
        (
            "socio-1001",
            "Apúntame a spinning el viernes y el jueves",
            "Las clases se reservan de una en una: dime primero una, por ejemplo "
            "«reserva spinning el viernes».",
        ),
        (
            "socio-1003",
            "Book me into yoga and pilates on Friday",
            "Classes are booked one at a time: tell me one first, for example "
            '"book yoga on Friday".',
        ),
    ],
)
def test_two_classes_in_one_booking_request_are_asked_one_at_a_time(
    client, agent, sub, said, told
):
    """It looked for the first kind on the first weekday of the week's order and
    said nothing of the other class."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, said))

    assert reply == told
    assert not ToolCallLog.objects.exists()
    assert not Booking.objects.exists()
