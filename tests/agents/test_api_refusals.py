"""Refusals reach a member in her own words through the conversation API, and a
member who asks for a person where no handoff is offered is told how to reach
the gym (issue 33, point 5)."""

from __future__ import annotations

import pytest
from django.apps import apps

from agents.assistant import instructions_for
from agents.models import Conversation, Message
from agents.verdict import SENTENCES
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import reply_to
from tools.models import AgentToolSetting, Handoff, ToolCallLog

pytestmark = pytest.mark.django_db

#: The demo's members who talk Spanish and English.
SPANISH, ENGLISH = "socio-1001", "socio-1003"


def domain_rows() -> int:
    return (
        sum(
            model._default_manager.count()
            for label in ("nutrition", "classes", "memberships")
            for model in apps.get_app_config(label).get_models()
        )
        + Handoff.objects.count()
    )


def talk(client, agent, sub: str, text: str) -> str:
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    return reply_to(send(client, started, text))


@pytest.mark.parametrize(
    ("sub", "asked", "said", "verdict"),
    [
        (
            SPANISH,
            "Apúntame 0 g de arroz blanco en la comida",
            "La cantidad tiene que ser mayor que 0 g.",
            SENTENCES["es"]["not_done"],
        ),
        (
            ENGLISH,
            "Log 0 g of white rice for lunch",
            "The amount has to be more than 0 g.",
            SENTENCES["en"]["not_done"],
        ),
    ],
)
def test_zero_grams_is_refused_in_her_words(client, agent, sub, asked, said, verdict):
    """«Apúntame 0 g de arroz blanco» was answered with the schema's English
    inside a Spanish reply; now the refusal is said from its code, in her
    language, and the model's call still got the precise reason. Nothing is
    written."""
    before = domain_rows()

    reply = talk(client, agent, sub, asked)

    assert reply == f"{verdict}\n\n{said}"  # not done, said once
    assert "minimum" not in reply
    call = ToolCallLog.objects.get(tool_name="add_food_to_meal")
    assert call.result["errors"] == [
        "grams: 0.0 is less than or equal to the minimum of 0"
    ]
    assert call.result["refusals"][0]["code"] == "more_than"
    assert domain_rows() == before


def handoff_off(agent) -> None:
    AgentToolSetting.objects.filter(agent=agent, tool_name="handoff_to_staff").update(
        enabled=False
    )


@pytest.mark.parametrize(
    ("sub", "asked", "said"),
    [
        (
            SPANISH,
            "Quiero hablar con una persona",
            "Desde aquí no puedo pasarte con una persona del equipo. Puedes "
            "contactar con el gimnasio: Recepción: 910 000 000",
        ),
        (
            ENGLISH,
            "I want to talk to a person",
            "I cannot pass you to a member of staff from here. You can contact "
            "the gym: Recepción: 910 000 000",
        ),
    ],
)
def test_without_handoff_a_person_asked_for_is_told_the_gyms_contact_details(
    client, agent, sub, asked, said
):
    """With the handoff turned off, asking for a person got «pide hablar con una
    persona del equipo», which she just had; now she reads how to reach the gym,
    as its owner wrote it, and no case is opened."""
    handoff_off(agent)
    agent.business.contact_details = "Recepción: 910 000 000"
    agent.business.save(update_fields=["contact_details"])
    before, messages = domain_rows(), Message.objects.count()

    reply = talk(client, agent, sub, asked)

    assert reply == said
    assert "pide hablar" not in reply and "ask to talk" not in reply
    assert domain_rows() == before
    assert not ToolCallLog.objects.exists()
    assert Message.objects.count() == messages + 2  # her message and the reply


@pytest.mark.parametrize(
    ("sub", "asked", "said"),
    [
        (
            SPANISH,
            "Quiero hablar con una persona",
            "Desde aquí no puedo pasarte con una persona del equipo. Puedes "
            "contactar directamente con el gimnasio.",
        ),
        (
            ENGLISH,
            "I want to talk to a person",
            "I cannot pass you to a member of staff from here. You can contact "
            "the gym directly.",
        ),
    ],
)
def test_without_handoff_or_contact_details_she_is_told_to_contact_the_gym(
    client, agent, sub, asked, said
):
    """No contact details given: she is told honestly to contact the gym, never
    that a person will answer here."""
    handoff_off(agent)
    agent.business.contact_details = ""
    agent.business.save(update_fields=["contact_details"])
    before = domain_rows()

    reply = talk(client, agent, sub, asked)

    assert reply == said
    assert domain_rows() == before
    assert not ToolCallLog.objects.exists()


def test_the_model_is_told_how_to_reach_the_gym_only_without_a_handoff(client, agent):
    """A real model's instructions name the contact details only when no handoff
    is offered, and are the same text each time for the same settings."""
    agent.business.contact_details = "Recepción: 910 000 000"
    agent.business.save(update_fields=["contact_details"])
    start(client, agent, identity_token=identity(agent, sub=SPANISH))
    conversation = Conversation.objects.select_related("business").get()

    offered = instructions_for(agent, conversation, {"handoff_to_staff"})
    not_offered = instructions_for(agent, conversation, {"search_foods"})

    assert "910 000 000" not in offered
    assert not_offered.endswith(
        "tell them how to reach the gym. The gym's contact details, as the gym "
        "wrote them: Recepción: 910 000 000"
    )
    assert instructions_for(agent, conversation, {"search_foods"}) == not_offered
