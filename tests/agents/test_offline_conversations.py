"""The demo model in conversations nobody wrote by hand: members' messages made of
the words its intents listen for, in any order and mix, through the API and the
real dispatcher. Whatever she says, a turn ends with a reply or a notice, the model
proposes only tools the conversation is offered, and a reply never speaks of a
change the verification log does not hold."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.models import Message
from agents.providers.offline.words import asks_whether
from agents.verdict import SENTENCES, WAITS
from gymnasia.text import fold
from tests.agents.api_client import identity, send, start
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db

#: Pieces of what members say, each a word or words some intent reacts to.
PIECES = (
    "hola",
    "gracias",
    "reserva",
    "apúntame",
    "quiero apuntarme",
    "book",
    "cancela",
    "cancel it",
    "cancela las dos",
    "y también el de las 19:00",
    "¿está cancelada?",
    "was it removed?",
    "did I log",
    "is it",
    "¿está",
    "cámbiala",
    "move it",
    "la primera",
    "la última",
    "la de las 9",
    "yoga",
    "spinning",
    "spin",
    "pilates",
    "clases",
    "¿qué hay",
    "apuntarse al gimnasio",
    "log in",
    "¿dónde estáis?",
    "what's on",
    "mañana",
    "el viernes",
    "2027-01-15",
    "2026-02-30",
    "a las 19:00",
    "añade",
    "pon",
    "he cenado",
    "150 g",
    "I ate",
    "una manzana",
    "2,5 kg",
    "-50 g",
    "arroz",
    "el blanco",
    "huevo",
    "white rice",
    "a la cena",
    "en el desayuno",
    "quita",
    "borra todo",
    "cambia el arroz a 120 g",
    "y 100 g de pollo",
    "add that",
    "añádelo",
    "mi total",
    "so far",
    "mi diario",
    "¿cuántas calorías",
    "proteínas",
    "¿qué tengo",
    "mi próxima clase",
    "mis reservas",
    "mi cuota",
    "congela",
    "del 1 al 10 de marzo",
    "¿cómo va mi solicitud?",
    "has it been approved?",
    "devuélveme",
    "10 euros",
    "mis pagos",
    "hablar con una persona",
    "y ahora",
    "no puedo ir",
    "darme de baja",
    "¿a qué hora es?",
    "¿quién da la clase?",
    "¿en qué sala es?",
    "¿y el sábado?",
    "¿y el arroz?",
    "no",
    "no me la",
    "quizás",
    "¿o mejor no?",
    "eso",
    "hi,",
    "buenas tardes",
    "té",
    "¿puedo congelar",
    "¿cuántas plazas quedan?",
    "cancélala",
    "esta semana",
    "9999-12-31",
)

messages = st.lists(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map(" ".join),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(said=messages, member=st.sampled_from(["socio-1001", "socio-1003", None]))
def test_whatever_she_says_the_demo_model_answers_within_what_is_offered(
    client, agent, said, member
):
    cache.clear()  # the conversations of earlier examples count for rate limits
    body = {"identity_token": identity(agent, sub=member)} if member else {}
    started = start(client, agent, **body)
    conversation = started.json()["conversation"]

    for text in said:
        # Changes to her data ("is it possible to talk to a person?" may hand the
        # conversation over).
        writes = ToolCallLog.objects.filter(
            conversation_key=conversation, effect="write"
        ).exclude(tool_name="handoff_to_staff")
        before = writes.count()
        response = send(client, started, text)

        assert response.status_code == 200, (text, response.content)
        roles = [m["role"] for m in response.json()["messages"]]
        assert roles[0] == "member" and roles[-1] in ("assistant", "notice"), text
        if asks_whether(fold(text)):
            # "Did I log…?", "¿está cancelada…?": a question makes no change.
            assert writes.count() == before, text

    calls = ToolCallLog.objects.filter(conversation_key=conversation)
    assert all(call.offered for call in calls)
    # The gym's own integrations are healthy: a failure would be a handler's bug.
    assert not calls.filter(status="failed").exists(), said
    if member is None:  # a visitor is offered no member tool (R3)
        assert set(calls.values_list("tool_name", flat=True)) <= {
            "search_foods",
            "list_classes",
            "handoff_to_staff",
        }
    # A reply that tells of a change made is backed by a write the log verified.
    made = (
        "Anotado:",
        "Quitado:",
        "Reserva confirmada",
        "Reserva cancelada",
        "Logged:",
    )
    verified = calls.filter(effect="write", verification="verified").exists()
    for reply in Message.objects.filter(
        conversation_id=conversation, role=Message.Role.ASSISTANT
    ):
        if reply.text.startswith(made):
            assert verified, reply.text
        for sentences in SENTENCES.values():
            assert (
                not reply.text.startswith(sentences[WAITS])
                or calls.filter(status="pending_approval").exists()
            )
