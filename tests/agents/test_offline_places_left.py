"""The demo model and the places left in a class: asked right after a list, or of a
class named, it reads the classes again (places change) and answers from them."""

from __future__ import annotations

import pytest

from gymnasia.classes.models import Booking
from gymnasia.gyms.models import Member
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    cancelled_told,
    classes_on_a_later_day,
    member_conversation,
    reply_to,
)
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def _listed_calls():
    return list(
        ToolCallLog.objects.filter(tool_name="list_classes")
        .order_by("created_at")
        .values_list("arguments", flat=True)
    )


@pytest.mark.parametrize(
    "asked",
    [
        "¿Cuántas plazas quedan?",
        "¿Quedan plazas?",
        "¿Hay sitio?",
        "How many places are left?",
        "Any spots left?",
    ],
)
def test_places_asked_after_a_list_read_that_lists_days_again(client, agent, asked):
    """It answered with the list of what it can do."""
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    # Someone else takes a place in the meantime: the answer is today's figure.
    sessions[0].capacity = 9
    sessions[0].save()

    reply = reply_to(send(client, started, asked))

    assert reply == (
        "Plazas libres:\n"
        f"- Yoga {day} 08:00 (Sala 1): 9 plazas libres\n"
        f"- Pilates {day} 09:00 (Sala 1): 10 plazas libres"
    )
    assert _listed_calls()[-1] == {"date_from": day, "date_to": day}
    assert Booking.objects.count() == 0


@pytest.mark.parametrize(
    "asked",
    [
        "¿Cuántas plazas quedan en la de pilates?",
        "¿Cuántas plazas quedan en la de las 9?",
        "How many spots are left in the 09:00 one?",
    ],
)
def test_places_of_one_class_of_the_list_name_only_that_class(client, agent, asked):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")

    reply = reply_to(send(client, started, asked))

    assert reply == f"Quedan 10 plazas en Pilates el {day} 09:00 (Sala 1)."
    assert _listed_calls()[-1]["date_from"] == day


def test_places_of_a_class_named_with_its_day_need_no_list_before(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, f"¿Quedan plazas en spinning el {day}?"))

    assert reply == f"Quedan 10 plazas en Spinning el {day} 09:00 (Sala 1)."
    assert _listed_calls() == [
        {"date_from": day, "date_to": day, "class_type": "spinning"}
    ]


def test_a_full_class_says_it_is_full_and_one_she_is_in_says_so(client, agent):
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Pilates", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la de pilates")
    # Spinning's one place goes to another member.
    sessions[2].capacity = 1
    sessions[2].save()
    other = Member.objects.exclude(external_id="socio-1001").first()
    Booking.objects.create(business=agent.business, member=other, session=sessions[2])

    reply = reply_to(send(client, started, f"¿Cuántas plazas quedan el {day}?"))

    assert reply == (
        "Plazas libres:\n"
        f"- Yoga {day} 08:00 (Sala 1): 10 plazas libres\n"
        f"- Pilates {day} 09:00 (Sala 1): ya tienes plaza\n"
        f"- Spinning {day} 10:00 (Sala 1): completa"
    )
    assert reply_to(send(client, started, "¿Quedan plazas en la de las 10?")) == (
        f"Spinning el {day} 10:00 (Sala 1) está completa."
    )
    assert reply_to(send(client, started, "¿Quedan plazas en la de pilates?")) == (
        f"Ya tienes plaza en Pilates el {day} 09:00 (Sala 1); quedan 9 plazas libres."
    )
    assert Booking.objects.count() == 2


def test_places_with_no_list_and_nothing_named_are_for_the_week(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "How many places are left?"))

    assert reply.startswith("Plazas libres:\n- ")
    [arguments] = _listed_calls()
    assert arguments["date_from"] < arguments["date_to"]


def test_places_of_a_time_the_list_lacks_say_there_is_none(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")

    reply = reply_to(
        send(client, started, "¿Cuántas plazas quedan en la de las 19:00?")
    )

    assert reply == f"No hay ninguna clase a las 19:00 el {day}."


def test_a_time_said_with_a_day_narrows_the_classes_listed(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, f"¿Qué clases hay el {day} a las 9?"))

    assert reply == f"Clases:\n- Pilates {day} 09:00 (Sala 1, 10 plazas libres)"


def test_a_visitor_is_told_the_places_too(client, agent):
    from tests.agents.api_client import start

    day, _ = classes_on_a_later_day(agent, "Yoga")
    started = start(client, agent)

    reply = reply_to(send(client, started, f"¿Cuántas plazas quedan el {day}?"))

    assert reply == f"Quedan 10 plazas en Yoga el {day} 08:00 (Sala 1)."


def test_a_time_said_after_places_asked_gives_that_classes_places(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "¿Cuántas plazas quedan?")

    reply = reply_to(send(client, started, "¿Y en la de las 9?"))

    assert reply == f"Quedan 10 plazas en Pilates el {day} 09:00 (Sala 1)."


def test_a_time_said_after_a_list_narrows_that_list(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"What classes are on {day}?")

    reply = reply_to(send(client, started, "And at 8?"))

    assert reply == f"Clases:\n- Yoga {day} 08:00 (Sala 1, 10 plazas libres)"


def test_places_after_a_list_of_part_of_a_day_are_of_that_part(client, agent):
    day, _ = classes_on_a_later_day(agent, "Spinning", "Spinning", hours=(8, 19))
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day} por la tarde?")

    reply = reply_to(send(client, started, "¿Quedan plazas en la de spinning?"))

    assert reply == f"Quedan 10 plazas en Spinning el {day} 19:00 (Sala 1)."


@pytest.mark.parametrize(
    ("sub", "listed", "booked", "asked", "told"),
    [
        (
            "socio-1001",
            "¿Qué clases hay el {day}?",
            "Reserva la primera",
            "¿Cuántas plazas quedan?",
            "Ya tienes plaza en Yoga el {day} 08:00 (Sala 1); quedan 9 plazas libres.",
        ),
        (
            "socio-1003",
            "What classes are there on {day}?",
            "book the first one",
            "any spots left?",
            "You already have a place in Yoga on {day} 08:00 (Sala 1); 9 places are "
            "left.",
        ),
    ],
)
def test_places_asked_right_after_a_booking_are_that_class(
    client, agent, sub, listed, booked, asked, told
):
    """It listed the places of every class of the week."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, listed.format(day=day))
    send(client, started, booked)
    assert Booking.objects.count() == 1

    reply = reply_to(send(client, started, asked))

    assert reply == told.format(day=day)
    read = ToolCallLog.objects.filter(tool_name="list_classes").latest("created_at")
    assert read.arguments == {"date_from": day, "date_to": day, "class_type": "yoga"}
    assert Booking.objects.count() == 1


@pytest.mark.parametrize(
    ("capacity", "told"),
    [(2, "; queda 1 plaza libre."), (1, "; no quedan más.")],
)
def test_the_last_places_of_her_class_are_said_as_they_are(
    client, agent, capacity, told
):
    day, sessions = classes_on_a_later_day(agent, "Yoga")
    sessions[0].capacity = capacity
    sessions[0].save()
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la primera")

    reply = reply_to(send(client, started, "¿Quedan plazas?"))

    assert reply == f"Ya tienes plaza en Yoga el {day} 08:00 (Sala 1){told}"


@pytest.mark.parametrize(
    ("sub", "language", "said"),
    [
        (
            "socio-1001",
            "es",
            (
                "¿Qué clases hay el {day}?",
                "Reserva la primera",
                "¿Quedan plazas?",
                "Cancélala",
            ),
        ),
        (
            "socio-1003",
            "en",
            (
                "What classes are there on {day}?",
                "book the first one",
                "any spots left?",
                "cancel it",
            ),
        ),
    ],
)
def test_her_class_just_told_of_by_its_places_is_the_one_cancelled(
    client, agent, sub, language, said
):
    """Told of the places of the class she had just booked, "cancélala" was not
    understood; with another yoga class that day, it still was not."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates", "Yoga")
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    *before, cancel = said
    for text in before:
        send(client, started, text.format(day=day))

    reply = reply_to(send(client, started, cancel))

    assert reply == cancelled_told(language)
    assert not Booking.objects.filter(status=Booking.Status.CONFIRMED).exists()


def test_the_places_of_an_afternoons_list_keep_to_the_afternoon(client, agent):
    day, sessions = classes_on_a_later_day(
        agent, "Yoga", "Body Pump", "Pilates", hours=(8, 13, 17)
    )
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day} por la tarde?")
    places = reply_to(send(client, started, "¿cuántas plazas quedan?"))
    assert "Yoga" not in places

    reply = reply_to(send(client, started, "Reserva la primera"))

    assert reply.startswith("Reserva confirmada: Body Pump el ")
    assert Booking.objects.get().session_id == sessions[1].pk
