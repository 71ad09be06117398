"""WhatsApp turns through the real webhook, the turn task's function and a fake
Graph API: a known number is its member, an unknown one a visitor; replies are
sent as text, split at WhatsApp's limit."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from agents.models import Conversation, WhatsAppInbound, WhatsAppReply
from agents.whatsapp.sending import TEXT_LIMIT, reply_parts
from approvals.events import events_announce
from approvals.models import Event
from gymnasia.classes.models import Booking
from gymnasia.gyms.models import Member
from tests.agents.offline_kit import at, weekday_ahead
from tests.agents.scripted import Say
from tests.agents.whatsapp_kit import LUCIA, STRANGER
from tools.models import Handoff

pytestmark = pytest.mark.django_db


def _ask(client, agent, fake, turns, wa_id: str, text: str) -> list[str]:
    """Send ``text`` from ``wa_id``, run its turn; what WhatsApp took for them."""
    before = len(fake.texts_to(wa_id))
    assert turns.post(client, agent, fake.inbound_text(wa_id, text)).status_code == 200
    assert turns.run() == ["done"]
    return fake.texts_to(wa_id)[before:]


def test_a_member_asks_for_the_rice_and_is_answered(
    client,
    agent,
    channel,
    graph,
    turns,
):
    [reply] = _ask(
        client,
        agent,
        graph,
        turns,
        LUCIA,
        "¿Cuántos carbohidratos tiene el arroz?",
    )

    assert "- Arroz blanco (cocido): 28 g de hidratos de carbono" in reply
    conversation = Conversation.objects.get()
    assert conversation.channel == "whatsapp"
    assert conversation.member.external_id == "socio-1001"
    assert conversation.wa_id == "+" + LUCIA
    sent = WhatsAppReply.objects.get()
    assert (sent.status, sent.kind) == ("accepted", "text")
    assert sent.wamid == graph.sent[-1]["wamid"]
    assert graph.sent[-1]["json"]["to"] == LUCIA


def test_a_member_books_a_class(client, agent, channel, graph, turns):
    day = weekday_ahead(agent).isoformat()

    [told] = _ask(
        client,
        agent,
        graph,
        turns,
        LUCIA,
        f"Reserva spinning el {day} a las 19:00",
    )

    booking = Booking.objects.get()
    assert booking.member.external_id == "socio-1001"
    assert told == f"Reserva confirmada: Spinning el {at(day, '19:00')} en Sala ciclo."


def test_one_conversation_per_member_and_channel(
    client,
    agent,
    channel,
    graph,
    turns,
):
    _ask(client, agent, graph, turns, LUCIA, "Hola")
    _ask(
        client,
        agent,
        graph,
        turns,
        LUCIA,
        "¿Cuántos carbohidratos tiene el arroz?",
    )

    conversation = Conversation.objects.get()
    assert conversation.messages.filter(role="member").count() == 2


def test_an_unknown_number_gets_no_member_data(
    client,
    agent,
    channel,
    graph,
    turns,
    model,
):
    day = weekday_ahead(agent).isoformat()
    Booking.objects.all().delete()
    scripted = model(Say(text="No puedo ver tus reservas desde este número."))

    [reply] = _ask(client, agent, graph, turns, STRANGER, "¿Qué reservas tengo?")

    conversation = Conversation.objects.get()
    assert conversation.member is None
    offered = {tool.name for tool in scripted.requests[0].tools}
    assert "list_my_bookings" not in offered
    assert "get_membership" not in offered
    assert "search_foods" in offered
    assert "add this number to their member record" in scripted.requests[0].instructions
    assert reply == "No puedo ver tus reservas desde este número."
    assert day not in reply


def test_a_number_on_two_members_is_a_visitor_and_staff_are_told(
    client,
    agent,
    channel,
    graph,
    turns,
    model,
):
    other = Member.objects.get(external_id="socio-1002")
    other.phone = "+" + LUCIA
    other.save()
    scripted = model(Say(text="Hola."), Say(text="Hola otra vez."))

    _ask(client, agent, graph, turns, LUCIA, "Hola")
    _ask(client, agent, graph, turns, LUCIA, "Hola")

    assert Conversation.objects.get().member is None
    assert "list_my_bookings" not in {t.name for t in scripted.requests[0].tools}
    case = Handoff.objects.get()
    assert case.cause == Handoff.Cause.WHATSAPP_AMBIGUOUS
    assert case.member is None
    events_announce()
    told = Event.objects.get(type=Event.Type.HANDOFF_OPENED)
    assert told.handoff_id == case.pk


def test_a_long_reply_is_sent_in_parts_within_the_limit(
    client,
    agent,
    channel,
    graph,
    turns,
    model,
):
    long = ("Una frase de prueba bastante larga. " * 300).strip()
    model(Say(text=long))

    parts = _ask(client, agent, graph, turns, LUCIA, "Cuéntame todo")

    assert len(parts) == 3
    assert all(len(part) <= TEXT_LIMIT for part in parts)
    assert " ".join(parts) == long


def test_reply_parts_cut_a_word_only_when_it_has_no_space():
    assert reply_parts("a" * 10, limit=4) == ["aaaa", "aaaa", "aa"]
    assert reply_parts("uno dos tres", limit=7) == ["uno dos", "tres"]
    assert reply_parts("uno\n\ndos", limit=5) == ["uno", "dos"]


def test_a_message_that_is_not_text_is_answered_in_fixed_words(
    client,
    agent,
    channel,
    graph,
    turns,
    model,
):
    scripted = model()
    webhook = graph.inbound_message(
        LUCIA, {"type": "image", "image": {"id": "1", "mime_type": "image/jpeg"}}
    )

    turns.post(client, agent, webhook)
    turns.run()

    assert scripted.requests == []
    assert graph.texts_to(LUCIA) == [
        "Solo puedo leer mensajes de texto; escribe tu pregunta, por favor."
    ]


def test_a_turn_whose_worker_stopped_is_told_to_staff_not_run_again(
    client, agent, channel, graph, turns, model
):
    scripted = model()
    turns.post(client, agent, graph.inbound_text(LUCIA, "Hola"))
    [inbound_id] = turns.queued
    # A worker took it eleven minutes ago and ended; its task comes back.
    WhatsAppInbound.objects.filter(pk=inbound_id).update(
        state="taken", taken_at=timezone.now() - datetime.timedelta(minutes=11)
    )

    assert turns.run() == ["stopped"]

    assert scripted.requests == []
    assert graph.texts_to(LUCIA) == []
    case = Handoff.objects.get(cause=Handoff.Cause.WHATSAPP_UNREACHED)
    assert "se detuvo" in case.known
    assert WhatsAppInbound.objects.get().state == "done"


def test_a_turn_taken_within_its_lease_is_left_to_its_worker(
    client, agent, channel, graph, turns, model
):
    scripted = model()
    turns.post(client, agent, graph.inbound_text(LUCIA, "Hola"))
    [inbound_id] = turns.queued
    WhatsAppInbound.objects.filter(pk=inbound_id).update(
        state="taken", taken_at=timezone.now() - datetime.timedelta(minutes=2)
    )

    assert turns.run() == ["already taken"]

    assert scripted.requests == []
    assert not Handoff.objects.exists()


def test_the_demo_model_tells_an_unknown_number_how_to_become_known(
    client, agent, channel, graph, turns
):
    [reply] = _ask(client, agent, graph, turns, STRANGER, "¿Cuál es mi cuota?")

    assert reply == (
        "Para eso necesito saber quién eres: pide al gimnasio que añada este "
        "número a tu ficha de socio y vuelve a escribirme."
    )
