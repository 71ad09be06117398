"""The WhatsApp webhook: Meta's handshake, signed deliveries only, each message
once, and bad input refused with nothing stored."""

from __future__ import annotations

import json

import pytest

from agents.models import Conversation, WhatsAppInbound, WhatsAppReply
from agents.whatsapp import webhook
from agents.whatsapp.services import whatsapp_webhook_path
from tests.agents.scripted import Say
from tests.agents.whatsapp_kit import LUCIA

pytestmark = pytest.mark.django_db


def _handshake(client, channel, **query):
    return client.get(whatsapp_webhook_path(channel), query)


def test_handshake_with_the_verify_token_returns_the_challenge(client, channel):
    response = _handshake(
        client,
        channel,
        **{
            "hub.mode": "subscribe",
            "hub.verify_token": channel.verify_token,
            "hub.challenge": "1158201444",
        },
    )

    assert response.status_code == 200
    assert response.content == b"1158201444"


@pytest.mark.parametrize(
    "mode,token", [("subscribe", "wrong"), ("unsubscribe", None), ("subscribe", "")]
)
def test_handshake_with_a_wrong_token_or_mode_is_forbidden(
    client, channel, mode, token
):
    response = _handshake(
        client,
        channel,
        **{
            "hub.mode": mode,
            "hub.verify_token": channel.verify_token if token is None else token,
            "hub.challenge": "42",
        },
    )

    assert response.status_code == 403
    assert b"42" not in response.content


def test_an_agent_without_a_channel_has_no_webhook(client, agent):
    response = client.post(
        f"/channels/whatsapp/{agent.public_key}/", b"{}", "application/json"
    )

    assert response.status_code == 404


def test_a_signed_message_is_stored_once_and_its_turn_enqueued(
    client,
    agent,
    channel,
    graph,
    turns,
):
    response = turns.post(client, agent, graph.inbound_text(LUCIA, "Hola"))

    assert response.status_code == 200
    inbound = WhatsAppInbound.objects.get()
    assert (inbound.wa_id, inbound.text, inbound.state) == (
        "+" + LUCIA,
        "Hola",
        "queued",
    )
    assert turns.queued == [inbound.pk]


def test_a_message_delivered_again_before_its_turn_is_enqueued_again_and_runs_once(
    client, agent, channel, graph, turns, model
):
    """Its first task may have been lost with the broker; the turn's task runs
    it once however often it is sent."""
    model(Say(text="Hola."))
    delivery = graph.inbound_text(LUCIA, "Hola", wamid="wamid.AGAIN")

    turns.post(client, agent, delivery)
    turns.post(client, agent, delivery)

    assert WhatsAppInbound.objects.count() == 1
    assert turns.run() == ["done", "already taken"]
    assert graph.texts_to(LUCIA) == ["Hola."]


def test_the_same_wamid_delivered_after_its_turn_enqueues_nothing(
    client,
    agent,
    channel,
    graph,
    turns,
):
    delivery = graph.inbound_text(LUCIA, "Hola", wamid="wamid.SAME")

    first = turns.post(client, agent, delivery)
    turns.run()
    again = turns.post(client, agent, delivery)

    assert (first.status_code, again.status_code) == (200, 200)
    assert WhatsAppInbound.objects.count() == 1
    assert turns.queued == []


@pytest.mark.parametrize("signature", [None, "", "sha256=", "sha256=" + "0" * 64])
def test_an_unsigned_or_missigned_post_stores_nothing(
    client,
    agent,
    channel,
    graph,
    turns,
    row_counts,
    signature,
):
    body, headers = graph.inbound_text(LUCIA, "Hola")
    headers.pop("X-Hub-Signature-256")
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    before = row_counts()

    response = turns.post(client, agent, (body, headers))

    assert response.status_code == 401
    assert row_counts() == before
    assert turns.queued == []


def test_a_post_signed_with_another_secret_stores_nothing(
    client,
    agent,
    channel,
    graph,
    turns,
    row_counts,
):
    body, headers = graph.inbound_text(LUCIA, "Hola")
    tampered = body.replace(b"Hola", b"Hole")
    before = row_counts()

    response = turns.post(client, agent, (tampered, headers))

    assert response.status_code == 401
    assert row_counts() == before


def _signed(fake, body: bytes) -> tuple[bytes, dict[str, str]]:
    return body, {"X-Hub-Signature-256": fake.sign(body)}


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[]",
        b'{"object": "page", "entry": []}',
        b'{"object": "whatsapp_business_account", "entry": {}}',
        b'{"object": "whatsapp_business_account", "entry": [{"changes": '
        b'[{"field": "messages", "value": {"metadata": {}, "messages": [{"id": 1}]}}]}]}',
    ],
)
def test_a_signed_body_that_is_not_a_delivery_is_refused(
    client,
    agent,
    channel,
    graph,
    turns,
    row_counts,
    body,
):
    before = row_counts()

    response = turns.post(client, agent, _signed(graph, body))

    assert response.status_code == 400
    assert row_counts() == before


def test_a_body_over_the_bound_is_refused(
    client,
    agent,
    channel,
    graph,
    turns,
    row_counts,
    monkeypatch,
):
    body, headers = graph.inbound_text(LUCIA, "x" * 2000)
    monkeypatch.setattr(webhook, "MAX_BODY_BYTES", 1000)
    before = row_counts()

    response = turns.post(client, agent, (body, headers))

    assert response.status_code == 413
    assert row_counts() == before


def test_a_delivery_for_another_phone_number_is_refused(
    client,
    agent,
    channel,
    graph,
    turns,
    row_counts,
):
    body, _ = graph.inbound_text(LUCIA, "Hola")
    payload = json.loads(body)
    payload["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"] = "999"
    before = row_counts()

    response = turns.post(client, agent, _signed(graph, json.dumps(payload).encode()))

    assert response.status_code == 404
    assert response.json()["error"] == "unknown_phone_number"
    assert row_counts() == before


def test_a_status_for_an_unknown_message_is_ignored(
    client,
    agent,
    channel,
    graph,
    turns,
    row_counts,
):
    before = row_counts()

    response = turns.post(
        client,
        agent,
        graph.status_update("wamid.NOBODY", "read", recipient_id=LUCIA),
    )

    assert response.status_code == 200
    assert row_counts() == before


def test_statuses_out_of_order_never_go_back(
    client,
    agent,
    channel,
    graph,
    turns,
):
    conversation = Conversation.objects.create(
        agent=agent, business=agent.business, language="es", channel="whatsapp"
    )
    message = conversation.messages.create(role="assistant", text="Hola")
    reply = WhatsAppReply.objects.create(
        conversation=conversation,
        message=message,
        kind="text",
        body="Hola",
        wamid="wamid.OUT",
        status="accepted",
    )

    for status in ("read", "delivered", "sent"):
        turns.post(
            client,
            agent,
            graph.status_update("wamid.OUT", status, recipient_id=LUCIA),
        )

    reply.refresh_from_db()
    assert reply.status == "read"
