"""The fake Graph API itself, through a real HTTP client (httpx) on loopback:
the webhooks' shape and signature, the phone number's reads, and the fault
modes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import httpx
import pytest
from django.conf import settings

from tests.fakes.graph_calls import (
    MEMBER,
    VERSION,
    auth,
    error_of,
    fake_running,
    send,
    text_payload,
)
from tests.fakes.whatsapp_graph import (
    GraphFake,
    client_kwargs,
    graph_fake,
    running_graph_fake,
)

__all__ = ["graph_fake"]

fake = pytest.fixture(fake_running)

# ----------------------------------------------------------------- webhooks


def test_inbound_text_is_meta_shaped_and_signed_over_its_raw_bytes(fake: GraphFake):
    body, headers = fake.inbound_text(wa_id=MEMBER, text="¿Hay clase de spinning?")

    expected = hmac.new(fake.app_secret.encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Hub-Signature-256"] == f"sha256={expected}"
    assert headers["X-Hub-Signature-256"] == fake.sign(body)
    assert headers["Content-Type"] == "application/json"
    # Non-ASCII is escaped as Meta sends it: re-serialising changes the digest.
    assert b"\\u00bf" in body
    reserialised = json.dumps(json.loads(body), ensure_ascii=False).encode()
    assert fake.sign(reserialised) != headers["X-Hub-Signature-256"]
    assert fake.sign(body + b" ") != headers["X-Hub-Signature-256"]

    payload = json.loads(body)
    assert payload["object"] == "whatsapp_business_account"
    entry = payload["entry"][0]
    assert entry["id"] == fake.waba_id
    change = entry["changes"][0]
    assert change["field"] == "messages"
    value = change["value"]
    assert value["messaging_product"] == "whatsapp"
    assert value["metadata"]["phone_number_id"] == fake.phone_number_id
    assert value["contacts"] == [{"profile": {"name": "Ana"}, "wa_id": MEMBER}]
    message = value["messages"][0]
    assert message["from"] == MEMBER
    assert message["type"] == "text"
    assert message["text"] == {"body": "¿Hay clase de spinning?"}
    assert message["timestamp"].isdigit()
    assert message["id"].startswith("wamid.")
    assert MEMBER.encode() in base64.b64decode(message["id"].removeprefix("wamid."))


def test_inbound_text_keeps_a_given_wamid_and_timestamp(fake: GraphFake):
    body, _ = fake.inbound_text(
        wa_id=MEMBER, text="hola", name="Luis", wamid="wamid.X1", timestamp=1700000000
    )
    value = json.loads(body)["entry"][0]["changes"][0]["value"]
    assert value["messages"][0]["id"] == "wamid.X1"
    assert value["messages"][0]["timestamp"] == "1700000000"
    assert value["contacts"][0]["profile"]["name"] == "Luis"


def test_a_batch_holds_every_entry_and_is_signed_anew(fake: GraphFake):
    first = fake.inbound_text(wa_id=MEMBER, text="uno")
    second = fake.inbound_text(wa_id="34600333444", text="dos")

    body, headers = fake.combine(first, second)

    entries = json.loads(body)["entry"]
    texts = [
        message["text"]["body"]
        for entry in entries
        for change in entry["changes"]
        for message in change["value"]["messages"]
    ]
    assert texts == ["uno", "dos"]
    assert headers["X-Hub-Signature-256"] == fake.sign(body)


def test_handshake_query_and_django_client_headers(fake: GraphFake):
    params = fake.verification_params("42")
    assert params == {
        "hub.mode": "subscribe",
        "hub.challenge": "42",
        "hub.verify_token": fake.verify_token,
    }
    body, headers = fake.inbound_text(wa_id=MEMBER, text="hola")
    kwargs = client_kwargs(headers)
    assert kwargs["content_type"] == "application/json"
    assert kwargs["HTTP_X_HUB_SIGNATURE_256"] == fake.sign(body)


# ------------------------------------------------------------- phone number


def test_phone_number_fields_with_the_token(fake: GraphFake):
    url = f"{fake.base_url}/v21.0/{fake.phone_number_id}"
    answer = httpx.get(url, headers=auth(fake))
    assert answer.status_code == 200
    fields = answer.json()
    assert fields["id"] == fake.phone_number_id
    assert fields["display_phone_number"] == fake.display_phone_number
    assert fields["quality_rating"] == "GREEN"
    assert {"verified_name", "code_verification_status", "platform_type"} <= set(fields)

    chosen = httpx.get(
        url, params={"fields": "verified_name,status"}, headers=auth(fake)
    )
    assert chosen.json() == {
        "verified_name": "Gimnasio Centro",
        "status": "CONNECTED",
        "id": fake.phone_number_id,
    }
    unknown = httpx.get(url, params={"fields": "colour"}, headers=auth(fake))
    assert unknown.status_code == 400
    assert error_of(unknown)["code"] == 100


def test_bad_missing_or_expired_token_is_refused_in_graphs_envelope(fake: GraphFake):
    url = f"{fake.base_url}/v21.0/{fake.phone_number_id}"

    wrong = httpx.get(url, headers={"Authorization": "Bearer EAAGnotthetoken"})
    assert wrong.status_code == 401
    assert error_of(wrong)["code"] == 190
    assert error_of(wrong)["type"] == "OAuthException"

    missing = httpx.get(url)
    assert missing.status_code == 400
    assert error_of(missing)["code"] == 104

    fake.expire_token()
    expired = httpx.get(url, headers=auth(fake))
    assert expired.status_code == 401
    assert (error_of(expired)["code"], error_of(expired)["error_subcode"]) == (190, 463)
    assert send(fake, text_payload(MEMBER, "hola")).status_code == 401
    assert fake.sent == []


def test_another_object_or_no_version_is_an_error(fake: GraphFake):
    other = httpx.get(f"{fake.base_url}/v21.0/123456789012345", headers=auth(fake))
    assert other.status_code == 400
    assert error_of(other)["code"] == 100
    assert error_of(other)["type"] == "GraphMethodException"

    unversioned = httpx.get(
        f"{fake.base_url}/{fake.phone_number_id}", headers=auth(fake)
    )
    assert unversioned.status_code == 400


# ------------------------------------------------------------------- faults


def test_error_500_then_rate_limits_then_normal(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    fake.fault("error_500")
    fake.fault("unavailable")
    fake.fault("rate_limited", times=2)
    fake.fault("pair_rate_limited")

    answers = [send(fake, text_payload(MEMBER, f"intento {n}")) for n in range(6)]

    assert [a.status_code for a in answers] == [500, 503, 400, 400, 400, 200]
    assert error_of(answers[0])["is_transient"] is True
    assert [error_of(a)["code"] for a in answers[1:5]] == [2, 130429, 130429, 131056]
    assert fake.texts_to(MEMBER) == ["intento 5"]
    assert fake.count("POST", "/messages") == 6


def test_a_fault_on_sends_spares_reads_of_the_number_and_read_marks(fake: GraphFake):
    body, _ = fake.inbound_text(wa_id=MEMBER, text="hola")
    wamid = json.loads(body)["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
    fake.fault("error_500", on="send")
    read = {"messaging_product": "whatsapp", "status": "read", "message_id": wamid}

    number = httpx.get(
        f"{fake.base_url}/{VERSION}/{fake.phone_number_id}", headers=auth(fake)
    )
    marked = send(fake, read)
    spoiled = send(fake, text_payload(MEMBER, "uno"))
    sent = send(fake, text_payload(MEMBER, "dos"))

    assert [r.status_code for r in (number, marked, spoiled, sent)] == [
        200,
        200,
        500,
        200,
    ]
    with pytest.raises(ValueError, match="on must be"):
        fake.fault("error_500", on="everything")


def test_lost_after_records_the_message_and_answers_nothing(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    fake.fault("lost_after")

    with pytest.raises(httpx.RemoteProtocolError):
        send(fake, text_payload(MEMBER, "¿llegó?"))

    assert fake.texts_to(MEMBER) == ["¿llegó?"]
    assert send(fake, text_payload(MEMBER, "después")).status_code == 200


def test_slow_answers_after_the_delay_with_the_message_sent(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    fake.fault("slow", seconds=1.0)

    with pytest.raises(httpx.ReadTimeout):
        send(fake, text_payload(MEMBER, "lento"), timeout=0.3)

    assert fake.texts_to(MEMBER) == ["lento"]


def test_refused_means_nothing_listens_for_a_while(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    fake.fault("refused", seconds=0.5)

    with pytest.raises(httpx.ConnectError):
        send(fake, text_payload(MEMBER, "nadie"))

    assert fake.wait_listening(timeout=5)
    assert send(fake, text_payload(MEMBER, "ya")).status_code == 200
    assert fake.texts_to(MEMBER) == ["ya"]


def test_unknown_fault_mode_is_an_error(fake: GraphFake):
    with pytest.raises(ValueError, match="fault mode"):
        fake.fault("gremlins")


# ------------------------------------------------------------------ settings


def test_fixture_lists_the_fake_in_settings(graph_fake: GraphFake):
    assert graph_fake.base_url in settings.WHATSAPP_API_BASES
    assert graph_fake.base_url.startswith("http://127.0.0.1:")


def test_running_fake_unlists_and_closes_after_the_block():
    with running_graph_fake() as fake:
        base = fake.base_url
        assert base in settings.WHATSAPP_API_BASES
    assert base not in getattr(settings, "WHATSAPP_API_BASES", [])
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{base}/v21.0/1")
