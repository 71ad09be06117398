"""The demo model as a whole: it asks a visitor to sign in, changes nothing when a
change is declined or only asked about, and answers thanks."""

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
    with_one_booking,
)
from tools.models import AgentToolSetting, Handoff, ToolCallLog

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "question", ["¿Qué he comido hoy?", "¿Cuándo vence mi cuota?", "Reserva la primera"]
)
def test_a_visitor_asking_for_member_things_is_asked_to_sign_in(
    client, agent, question
):
    """Member tools are not offered to a visitor (R3); the demo model says how to
    get them, and nothing runs."""
    started = start(client, agent)

    reply = reply_to(send(client, started, question))

    assert reply == (
        "Para eso necesito saber quién eres: entra con tu cuenta en la web del "
        "gimnasio y vuelve a preguntármelo."
    )
    assert not ToolCallLog.objects.exists()


def test_a_tool_the_owner_turned_off_is_not_a_matter_of_signing_in(client, agent):
    AgentToolSetting.objects.filter(agent=agent, tool_name="get_membership").update(
        enabled=False
    )
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Cuándo vence mi cuota?"))

    assert reply.startswith("Eso no lo puedo hacer desde aquí.")
    assert not ToolCallLog.objects.exists()


@pytest.mark.parametrize(
    "declined",
    [
        "No quiero reservar nada",
        "No me reserves ninguna clase",
        "Don't book anything",
        "Don’t cancel my booking",  # the apostrophe phones type
        "No quiero hablar con una persona",
        "No canceles mi reserva",
        # These cancelled her yoga booking.
        "No me canceles la de yoga",
        "No me la canceles",
        "Nunca canceles mi clase de yoga",
        "Never cancel my yoga booking",
    ],
)
def test_a_declined_change_changes_nothing(client, agent, declined):
    started = with_one_booking(client, agent)
    calls = ToolCallLog.objects.count()

    reply = reply_to(send(client, started, declined))

    assert reply == "De acuerdo: no cambio nada."
    assert ToolCallLog.objects.count() == calls
    assert Booking.objects.filter(status="confirmed").count() == 1


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("¿Puedo reservar una clase?", "Sí: dime qué clase y qué día"),
        ("¿Puedo cancelar una reserva?", "Sí: dime qué reserva"),
        ("¿Se puede cancelar una reserva?", "Sí: dime qué reserva"),
    ],
)
def test_asking_whether_a_change_can_be_made_makes_none(
    client, agent, question, answer
):
    started = with_one_booking(client, agent)
    calls = ToolCallLog.objects.count()

    reply = reply_to(send(client, started, question))

    assert reply.startswith(answer)
    assert ToolCallLog.objects.count() == calls
    assert Booking.objects.filter(status="confirmed").count() == 1


def test_thanks_are_answered(client, agent):
    started = member_conversation(client, agent)

    assert reply_to(send(client, started, "Gracias")) == "¡De nada! ¿Algo más?"


@pytest.mark.parametrize(
    ("said", "sub", "greeted"),
    [
        ("Hola", "socio-1001", "¡Hola! Puedo ayudarte con "),
        ("Buenos días", "socio-1001", "¡Hola! Puedo ayudarte con "),
        ("Good morning!", "socio-1003", "Hello! I can help you with "),
    ],
)
def test_a_greeting_is_greeted_back_with_what_it_can_help_with(
    client, agent, said, sub, greeted
):
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, said))

    assert reply.startswith(greeted)
    assert not ToolCallLog.objects.exists()


@pytest.mark.parametrize(
    ("said", "sub", "searched", "told"),
    [
        (
            "Hola, ¿cuántos carbohidratos tiene el arroz integral?",
            "socio-1001",
            "arroz integral",
            "Arroz integral (cocido): 23,5 g",
        ),
        (
            "Buenas tardes! proteínas de la avena",
            "socio-1001",
            "avena",
            "Copos de avena: 66 g",
        ),
        (
            "Hi, how much protein does the brown rice have?",
            "socio-1003",
            "brown rice",
            "Arroz integral (cocido): 23.5 g",
        ),
    ],
)
def test_a_greeting_before_a_question_is_not_taken_for_part_of_it(
    client, agent, said, sub, searched, told
):
    """ "Hi" was searched for as a food, and the search failed."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, said))

    assert told in reply
    assert not reply.startswith(("¡Hola!", "Hello!"))
    assert list(
        ToolCallLog.objects.values_list("tool_name", "arguments", "status")
    ) == [("search_foods", {"query": searched}, "ok")]


@pytest.mark.parametrize(
    ("sub", "said", "told"),
    [
        (None, "¿Cuánto cuesta apuntarse al gimnasio?", "Puedo ayudarte con "),
        ("socio-1001", "Quiero apuntarme al gimnasio", "Puedo ayudarte con "),
        ("socio-1001", "Quiero registrarme", "Puedo ayudarte con "),
        ("socio-1003", "I can't log in to the app", "I can help you with "),
        ("socio-1003", "What's your address?", "I cannot tell from here: I do "),
    ],
)
def test_words_that_merely_look_like_logging_a_food_ask_for_no_grams(
    client, agent, sub, said, told
):
    """ "¿Cuánto cuesta apuntarse al gimnasio?" was answered «¿Cuántos gramos?»:
    "apuntarse", "registrarme", "log in" and "address" began like a request to
    log a food."""
    token = {"identity_token": identity(agent, sub=sub)} if sub else {}
    started = start(client, agent, **token)

    reply = reply_to(send(client, started, said))

    assert reply.startswith(told)
    assert not ToolCallLog.objects.exists()


@pytest.mark.parametrize(
    "asked",
    [
        "Quiero hablar con alguien",
        "Can I talk to someone?",
        "¿Me puedes pasar con alguien del gimnasio?",
        "Pásame con recepción",
        "I want to talk to a trainer",
        "¿Puedo hablar con un entrenador?",
        "Can I speak to the manager?",
    ],
)
def test_a_visitor_asking_for_someone_is_handed_to_staff(client, agent, asked):
    """Talking to a person needs no sign-in; the staff read the visitor's words."""
    started = start(client, agent)

    reply_to(send(client, started, asked))

    assert Handoff.objects.get().reason == asked


def test_a_day_said_after_a_list_of_classes_lists_that_days_same_kind(client, agent):
    """ "¿Y el …?" after yoga of one day: yoga of the other day. It was not
    understood."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    next_day = datetime.date.fromisoformat(day) + datetime.timedelta(days=1)
    started = member_conversation(client, agent)
    send(client, started, f"¿Hay yoga el {day}?")

    reply = reply_to(send(client, started, f"¿Y el {next_day}?"))

    call = ToolCallLog.objects.filter(tool_name="list_classes").latest("created_at")
    assert call.arguments == {
        "date_from": next_day.isoformat(),
        "date_to": next_day.isoformat(),
        "class_type": "yoga",
    }
    assert reply == f"No hay clases de yoga el {next_day}."


def test_a_day_said_after_the_diary_reads_that_days_diary(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Añade 150 g de arroz blanco a mi comida de ayer")
    send(client, started, "¿Qué he comido hoy?")

    reply = reply_to(send(client, started, "¿Y ayer?"))

    yesterday = business_today(business=agent.business) - datetime.timedelta(days=1)
    assert reply.startswith(f"Tu diario del {yesterday}:")


def test_a_day_said_out_of_the_blue_is_not_taken_for_anything(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Y mañana?"))

    assert reply.startswith("Puedo ayudarte con")
    assert not ToolCallLog.objects.exists()


def test_what_it_can_help_with_is_what_this_conversation_offers(client, agent):
    """A member hears of her diary, bookings and membership; a visitor only of
    what she is offered; a tool the gym turned off is not promised."""
    member = reply_to(send(client, member_conversation(client, agent), "hola"))
    visitor = reply_to(send(client, start(client, agent), "hola"))
    AgentToolSetting.objects.filter(
        agent=agent, tool_name__in=["get_membership", "freeze_membership"]
    ).update(enabled=False)
    without = reply_to(send(client, member_conversation(client, agent), "hola"))

    assert member == (
        "¡Hola! Puedo ayudarte con los nutrientes de los alimentos del gimnasio, tu diario "
        "de comidas, las clases, tus reservas, tu cuota y tus solicitudes al equipo. "
        "También puedo pasarte con "
        "una persona del equipo. ¿Qué necesitas?"
    )
    assert visitor == (
        "¡Hola! Puedo ayudarte con los nutrientes de los alimentos del gimnasio y las "
        "clases. También puedo pasarte con una persona del equipo. ¿Qué necesitas?"
    )
    assert "tu cuota" not in without and "tus reservas" in without


def test_a_new_question_about_a_day_is_not_taken_for_the_kind_asked_before(
    client, agent
):
    """ "What's on on Friday?" after a question about yoga lists every class
    that day, not only yoga."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"¿Hay yoga el {day}?")

    reply = reply_to(send(client, started, f"¿Qué hay el {day}?"))

    assert reply == (
        f"Clases:\n- Yoga {day} 08:00 (Sala 1, 10 plazas libres)\n"
        f"- Spinning {day} 09:00 (Sala 1, 10 plazas libres)"
    )


def test_a_thank_you_between_does_not_end_the_question_followed_up(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    before = datetime.date.fromisoformat(str(day)) - datetime.timedelta(days=1)
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {before}?")
    send(client, started, "gracias")

    reply = reply_to(send(client, started, f"¿Y el {day}?"))

    assert reply.startswith("Clases:")
    assert f"Yoga {day} 08:00" in reply


@pytest.mark.parametrize(
    ("sub", "asked"),
    [
        ("socio-1001", "Una pregunta: ¿el gimnasio abre los domingos?"),
        ("socio-1001", "¿A qué hora cerráis hoy?"),
        ("socio-1001", "¿Dónde está el gimnasio?"),
        ("socio-1003", "What time do you open on Sunday?"),
        ("socio-1003", "Where is the gym?"),
    ],
)
def test_the_gyms_hours_or_address_are_said_to_be_out_of_its_reach(
    client, agent, sub, asked
):
    """After a list of classes, «¿el gimnasio abre los domingos?» was answered
    «No hay clases el …», as if that said whether it opens."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, "¿Qué clases hay mañana?")

    reply = reply_to(send(client, started, asked))

    assert reply in (
        "Eso no lo sé desde aquí: no tengo el horario ni la dirección del gimnasio. "
        "Si quieres, pide hablar con una persona del equipo.",
        "I cannot tell from here: I do not have the gym's opening hours or address. "
        "If you like, ask to talk to a member of staff.",
    )
    assert ToolCallLog.objects.count() == 1  # the list of classes only


@pytest.mark.parametrize(
    ("sub", "said", "told"),
    [
        ("socio-1001", "Adiós", "¡Hasta pronto!"),
        ("socio-1001", "Vale, hasta luego", "¡Hasta pronto!"),
        ("socio-1003", "Bye!", "Goodbye!"),
        ("socio-1003", "thanks, see you", "Goodbye!"),
    ],
)
def test_a_goodbye_is_said_goodbye_to(client, agent, sub, said, told):
    """ "Adiós" got the list of what the assistant can do."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    assert reply_to(send(client, started, said)) == told
    assert not ToolCallLog.objects.exists()


def test_the_classes_of_a_sunday_are_still_listed(client, agent):
    started = member_conversation(client, agent)

    send(client, started, "¿Qué clases hay el domingo?")

    assert ToolCallLog.objects.get().tool_name == "list_classes"
