"""The demo model as a whole: it asks a visitor to sign in, changes nothing when a
change is declined or only asked about, and answers thanks."""

from __future__ import annotations

import pytest

from gymnasia.classes.models import Booking
from tests.agents.api_client import send, start
from tests.agents.offline_kit import (
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
        "No quiero hablar con una persona",
        "No canceles mi reserva",
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
    "asked", ["Quiero hablar con alguien", "Can I talk to someone?"]
)
def test_a_visitor_asking_for_someone_is_handed_to_staff(client, agent, asked):
    """Talking to a person needs no sign-in; the staff read the visitor's words."""
    started = start(client, agent)

    reply_to(send(client, started, asked))

    assert Handoff.objects.get().reason == asked
