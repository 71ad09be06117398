"""The demo model and the time of day a member says: "a las 7 de la tarde" is
19:00, "por la tarde" is the afternoon's classes, "el jueves por la mañana" is
Thursday morning and "esta mañana" today, never tomorrow."""

from __future__ import annotations

import datetime

import pytest

from gymnasia.classes.models import Booking
from gymnasia.gyms.selectors import business_today
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    classes_on_a_later_day,
    member_conversation,
    reply_to,
)
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("sub", "said"),
    [
        ("socio-1001", "Reserva spinning el {day} a las 7 de la tarde"),
        ("socio-1001", "Reserva spinning el {day} a las 7:00 de la tarde"),
        ("socio-1001", "Apúntame a spinning el {day} a las 7 por la tarde"),
        ("socio-1003", "Book spinning on {day} at 7pm"),
        ("socio-1003", "Book spinning on {day} at 7 p.m."),
    ],
)
def test_an_hour_of_the_afternoon_books_the_afternoons_class(client, agent, sub, said):
    """ "A las 7 de la tarde" booked the 07:00 class; "at 7pm" asked which."""
    day, [_, evening] = classes_on_a_later_day(
        agent, "Spinning", "Spinning", hours=(7, 19)
    )
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, said.format(day=day)))

    assert Booking.objects.get().session_id == evening.pk
    assert reply.endswith(f"{day} 19:00 en Sala 1.") or reply.endswith(
        f"{day} 19:00 in Sala 1."
    )


@pytest.mark.parametrize(
    "said",
    ["Reserva spinning el {day} a las 7 de la mañana", "Book spinning on {day} at 7am"],
)
def test_an_hour_of_the_morning_books_the_mornings_class(client, agent, said):
    day, [morning, _] = classes_on_a_later_day(
        agent, "Spinning", "Spinning", hours=(7, 19)
    )
    started = member_conversation(client, agent)

    send(client, started, said.format(day=day))

    assert Booking.objects.get().session_id == morning.pk


@pytest.mark.parametrize(
    ("sub", "said", "booked"),
    [
        ("socio-1001", "¿Me reservas spinning el {day} por la tarde?", 1),
        ("socio-1001", "Reserva spinning el {day} por la mañana", 0),
        ("socio-1003", "Book spinning on {day} in the evening", 1),
        ("socio-1003", "Book me into spinning on the morning of {day}", 0),
    ],
)
def test_a_part_of_the_day_books_that_parts_class(client, agent, sub, said, booked):
    """Two spinning classes that day, one in the morning and one in the
    afternoon: "por la tarde" says which, where it was asked which."""
    day, sessions = classes_on_a_later_day(agent, "Spinning", "Spinning", hours=(8, 19))
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    send(client, started, said.format(day=day))

    assert Booking.objects.get().session_id == sessions[booked].pk


def test_a_part_of_the_day_with_two_classes_in_it_still_asks_which(client, agent):
    day, _ = classes_on_a_later_day(
        agent, "Spinning", "Spinning", "Spinning", hours=(8, 18, 19)
    )
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, f"Reserva spinning el {day} por la tarde"))

    assert reply.startswith(
        f"Hay varias: Spinning {day} 18:00, Spinning {day} 19:00. ¿Cuál reservo?"
    )
    assert not Booking.objects.exists()


def test_a_part_of_the_day_with_no_class_in_it_books_nothing_and_says_so(client, agent):
    day, _ = classes_on_a_later_day(agent, "Spinning", hours=(8,))
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, f"Reserva spinning el {day} por la noche"))

    assert reply == f"No hay clases de spinning por la noche el {day}."
    assert not Booking.objects.exists()


@pytest.mark.parametrize(
    ("said", "listed", "not_listed"),
    [
        ("¿Qué clases hay el {day} por la tarde?", "Pilates", "Yoga"),
        ("What classes are on {day} in the morning?", "Yoga", "Pilates"),
    ],
)
def test_the_classes_of_a_part_of_the_day_are_that_parts(
    client, agent, said, listed, not_listed
):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates", hours=(9, 18))
    started = start(
        client,
        agent,
        identity_token=identity(
            agent, sub="socio-1003" if said.startswith("What") else "socio-1001"
        ),
    )

    reply = reply_to(send(client, started, said.format(day=day)))

    assert f"- {listed} {day}" in reply
    assert not_listed not in reply


@pytest.mark.parametrize(
    ("sub", "asked", "answer"),
    [
        (
            "socio-1001",
            "¿Qué clases hay el {day} por la noche?",
            "No hay clases por la noche el {day}.",
        ),
        (
            "socio-1003",
            "Any yoga classes on {day} in the evening?",
            "There are no yoga classes in the evening on {day}.",
        ),
    ],
)
def test_no_class_in_the_part_of_the_day_asked_about_says_so(
    client, agent, sub, asked, answer
):
    """The classes of the morning are not "none" of the evening's, nor listed
    as if they were."""
    day, _ = classes_on_a_later_day(agent, "Yoga", hours=(9,))
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, asked.format(day=day)))

    assert reply == answer.format(day=day)


def _next(weekday: int, today: datetime.date) -> datetime.date:
    return today + datetime.timedelta(days=(weekday - today.weekday()) % 7)


@pytest.mark.parametrize(
    ("said", "day"),
    [
        ("¿Qué clases hay el jueves por la mañana?", lambda t: _next(3, t)),
        ("¿Qué clases hay mañana por la mañana?", lambda t: t + datetime.timedelta(1)),
        ("¿Qué clases hay esta tarde?", lambda t: t),
        ("¿Hay yoga esta mañana?", lambda t: t),
        ("What classes are on this evening?", lambda t: t),
        ("Any classes tonight?", lambda t: t),
    ],
)
def test_the_day_of_a_part_of_the_day_is_the_day_said(client, agent, said, day):
    """ "El jueves por la mañana" looked for tomorrow's classes (the «mañana» of
    the morning read as tomorrow)."""
    started = member_conversation(client, agent)

    send(client, started, said)

    looked = ToolCallLog.objects.get(tool_name="list_classes")
    expected = day(business_today(business=agent.business)).isoformat()
    assert (looked.arguments["date_from"], looked.arguments["date_to"]) == (
        expected,
        expected,
    )


@pytest.mark.parametrize(
    "said",
    [
        "¿Qué he desayunado esta mañana?",
        "Añade 100 g de avena a mi desayuno de esta mañana",
    ],
)
def test_this_morning_is_todays_diary_never_tomorrows(client, agent, said):
    """«Esta mañana» read as tomorrow («mañana»)."""
    started = member_conversation(client, agent)

    send(client, started, said)

    today = business_today(business=agent.business).isoformat()
    [call] = ToolCallLog.objects.filter(
        tool_name__in=["get_meal_diary", "add_food_to_meal"]
    )
    assert call.arguments["date"] == today


def test_a_greeting_names_no_part_of_the_day(client, agent):
    """ "Good morning" is a greeting: the whole day's classes are listed."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates", hours=(9, 18))
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))

    reply = reply_to(send(client, started, f"Good morning! What classes are on {day}?"))

    assert f"- Yoga {day} 09:00" in reply
    assert f"- Pilates {day} 18:00" in reply


@pytest.mark.parametrize(
    ("asked", "meant", "booked", "told"),
    [
        (
            "¿Qué clases hay el {day} por la tarde?",
            "Reserva la primera",
            1,
            "Reserva confirmada: Body Pump el ",
        ),
        (
            "What classes are there on {day} in the evening?",
            "book the first one",
            2,
            "Reserva confirmada: Pilates el ",
        ),
        (
            "¿Qué clases hay el {day} por la tarde?",
            "Reserva la segunda",
            2,
            "Reserva confirmada: Pilates el ",
        ),
        (
            "¿Qué clases hay el {day} por la mañana?",
            "¿a qué hora es?",
            None,
            "Yoga es el {day} 08:00 en Sala 1.",
        ),
        (
            "¿Qué clases hay el {day} a las 17:00?",
            "apúntame",
            2,
            "Reserva confirmada: Pilates el ",
        ),
    ],
)
def test_a_list_narrowed_to_a_part_of_the_day_is_the_list_pointed_at(
    client, agent, asked, meant, booked, told
):
    """It booked the first class of the whole day (a morning class) for "the first
    one" of the evening's list it had just shown."""
    day, sessions = classes_on_a_later_day(
        agent, "Yoga", "Body Pump", "Pilates", "Spinning", hours=(8, 13, 17, 20)
    )
    started = member_conversation(client, agent)
    send(client, started, asked.format(day=day))

    reply = reply_to(send(client, started, meant))

    assert reply.startswith(told.format(day=day))
    if booked is None:
        assert not Booking.objects.exists()
    else:
        assert Booking.objects.get().session_id == sessions[booked].pk
