"""The fake Graph API itself, through a real HTTP client (httpx) on loopback:
the webhooks' shape and signature, the send endpoint's answers and errors, the
24-hour rule, templates and the fault modes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from django.conf import settings

from tests.fakes.whatsapp_graph import (
    GraphFake,
    client_kwargs,
    graph_fake,
    running_graph_fake,
)

__all__ = ["graph_fake"]

VERSION = "v23.0"
MEMBER = "34600111222"
HOUR = 3600.0


@pytest.fixture
def fake() -> Iterator[GraphFake]:
    started = GraphFake()
    try:
        yield started
    finally:
        started.close()


def _auth(fake: GraphFake) -> dict[str, str]:
    return {"Authorization": f"Bearer {fake.access_token}"}


def _send(fake: GraphFake, payload: dict[str, Any], **options: Any) -> httpx.Response:
    url = f"{fake.base_url}/{VERSION}/{fake.phone_number_id}/messages"
    return httpx.post(url, json=payload, headers=_auth(fake), **options)


def _text(to: str, body: str) -> dict[str, Any]:
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "text",
        "text": {"body": body, "preview_url": False},
    }


def _template(name: str, params: list[str], language: str = "es") -> dict[str, Any]:
    return {
        "messaging_product": "whatsapp",
        "to": MEMBER,
        "type": "template",
        "template": {
            "name": name,
            "language": {"code": language},
            "components": [
                {
                    "type": "body",
                    "parameters": [{"type": "text", "text": p} for p in params],
                }
            ],
        },
    }


def _error(response: httpx.Response) -> dict[str, Any]:
    error = response.json()["error"]
    assert {"message", "type", "code", "fbtrace_id"} <= error.keys()
    return error


def _statuses(webhook: tuple[bytes, dict[str, str]]) -> list[dict[str, Any]]:
    body, _ = webhook
    return json.loads(body)["entry"][0]["changes"][0]["value"]["statuses"]


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
    answer = httpx.get(url, headers=_auth(fake))
    assert answer.status_code == 200
    fields = answer.json()
    assert fields["id"] == fake.phone_number_id
    assert fields["display_phone_number"] == fake.display_phone_number
    assert fields["quality_rating"] == "GREEN"
    assert {"verified_name", "code_verification_status", "platform_type"} <= set(fields)

    chosen = httpx.get(
        url, params={"fields": "verified_name,status"}, headers=_auth(fake)
    )
    assert chosen.json() == {
        "verified_name": "Gimnasio Centro",
        "status": "CONNECTED",
        "id": fake.phone_number_id,
    }
    unknown = httpx.get(url, params={"fields": "colour"}, headers=_auth(fake))
    assert unknown.status_code == 400
    assert _error(unknown)["code"] == 100


def test_bad_missing_or_expired_token_is_refused_in_graphs_envelope(fake: GraphFake):
    url = f"{fake.base_url}/v21.0/{fake.phone_number_id}"

    wrong = httpx.get(url, headers={"Authorization": "Bearer EAAGnotthetoken"})
    assert wrong.status_code == 401
    assert _error(wrong)["code"] == 190
    assert _error(wrong)["type"] == "OAuthException"

    missing = httpx.get(url)
    assert missing.status_code == 400
    assert _error(missing)["code"] == 104

    fake.expire_token()
    expired = httpx.get(url, headers=_auth(fake))
    assert expired.status_code == 401
    assert (_error(expired)["code"], _error(expired)["error_subcode"]) == (190, 463)
    assert _send(fake, _text(MEMBER, "hola")).status_code == 401
    assert fake.sent == []


def test_another_object_or_no_version_is_an_error(fake: GraphFake):
    other = httpx.get(f"{fake.base_url}/v21.0/123456789012345", headers=_auth(fake))
    assert other.status_code == 400
    assert _error(other)["code"] == 100
    assert _error(other)["type"] == "GraphMethodException"

    unversioned = httpx.get(
        f"{fake.base_url}/{fake.phone_number_id}", headers=_auth(fake)
    )
    assert unversioned.status_code == 400


# --------------------------------------------------------------- sending text


def test_text_within_the_window_is_accepted_and_recorded(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")

    answer = _send(fake, _text("+" + MEMBER, "¡Hola, Ana!"))

    assert answer.status_code == 200
    assert answer.headers["facebook-api-version"] == VERSION
    payload = answer.json()
    wamid = payload["messages"][0]["id"]
    assert payload == {
        "messaging_product": "whatsapp",
        "contacts": [{"input": "+" + MEMBER, "wa_id": MEMBER}],
        "messages": [{"id": wamid}],
    }
    assert wamid.startswith("wamid.")
    assert [entry["wamid"] for entry in fake.sent] == [wamid]
    assert fake.sent[0]["failure"] is None
    assert fake.sent[0]["json"]["text"]["body"] == "¡Hola, Ana!"
    assert fake.texts_to(MEMBER) == ["¡Hola, Ana!"]
    assert fake.count("POST", "/messages") == 1
    assert fake.requests[-1]["headers"]["authorization"] == "<redacted>"
    assert fake.requests[-1]["json"]["to"] == "+" + MEMBER

    statuses = [_statuses(hook)[0] for hook in fake.status_callbacks_for(wamid)]
    assert [s["status"] for s in statuses] == ["sent", "delivered", "read"]
    assert {s["id"] for s in statuses} == {wamid}
    assert {s["recipient_id"] for s in statuses} == {MEMBER}
    assert statuses[0]["pricing"]["category"] == "service"
    assert "errors" not in statuses[0]


def test_text_longer_than_4096_characters_is_refused(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")

    too_long = _send(fake, _text(MEMBER, "a" * 4097))

    assert too_long.status_code == 400
    error = _error(too_long)
    assert error["code"] == 100
    assert error["error_data"]["messaging_product"] == "whatsapp"
    assert fake.sent == []
    assert _send(fake, _text(MEMBER, "a" * 4096)).status_code == 200


@pytest.mark.parametrize(
    "change",
    [
        {"messaging_product": "sms"},
        {"to": ""},
        {"to": "12"},
        {"text": {"body": ""}},
        {"text": {"body": "hola", "preview_url": "yes"}},
        {"type": "fax"},
    ],
)
def test_malformed_sends_are_invalid_parameters(
    fake: GraphFake, change: dict[str, Any]
):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    answer = _send(fake, {**_text(MEMBER, "hola"), **change})
    assert answer.status_code == 400
    assert _error(answer)["code"] == 100
    assert fake.sent == []


# ------------------------------------------------------------- 24-hour window


def test_free_form_text_outside_24_hours_fails_through_the_status_webhook(
    fake: GraphFake,
):
    never = _send(fake, _text(MEMBER, "¿Sigues ahí?"))
    assert never.status_code == 200
    wamid = never.json()["messages"][0]["id"]

    callbacks = fake.status_callbacks_for(wamid)
    assert len(callbacks) == 1
    (status,) = _statuses(callbacks[0])
    assert status["status"] == "failed"
    assert status["errors"][0]["code"] == 131047
    assert status["errors"][0]["title"] == "Re-engagement message"
    assert "pricing" not in status
    assert fake.sent[0]["failure"] == 131047


def test_the_window_is_24_hours_from_the_last_inbound_message(fake: GraphFake):
    fake.set_last_inbound(MEMBER, time.time() - 23.9 * HOUR)
    inside = _send(fake, _text(MEMBER, "dentro")).json()["messages"][0]["id"]

    fake.set_last_inbound(MEMBER, time.time() - 24 * HOUR - 5)
    outside = _send(fake, _text(MEMBER, "fuera")).json()["messages"][0]["id"]

    fake.inbound_text(wa_id=MEMBER, text="vuelvo")
    again = _send(fake, _text(MEMBER, "otra vez")).json()["messages"][0]["id"]

    failures = {e["wamid"]: e["failure"] for e in fake.sent}
    assert failures == {inside: None, outside: 131047, again: None}


def test_an_older_inbound_does_not_close_an_open_window(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="ahora")
    fake.inbound_text(
        wa_id=MEMBER, text="antes", timestamp=int(time.time() - 30 * HOUR)
    )
    assert fake.in_window(MEMBER)


def test_a_number_not_on_whatsapp_is_accepted_then_fails_131026(fake: GraphFake):
    fake.not_on_whatsapp("34699000000")
    fake.inbound_text(wa_id="34699000000", text="hola")

    answer = _send(fake, _text("34699000000", "hola"))

    assert answer.status_code == 200
    wamid = answer.json()["messages"][0]["id"]
    (status,) = _statuses(fake.status_callbacks_for(wamid)[0])
    assert (status["status"], status["errors"][0]["code"]) == ("failed", 131026)


def test_recipient_outside_the_allowed_list_is_refused_at_once(fake: GraphFake):
    fake.allow_only(["34600000001"])
    answer = _send(fake, _text(MEMBER, "hola"))
    assert answer.status_code == 400
    assert _error(answer)["code"] == 131030
    assert fake.sent == []


# ---------------------------------------------------------------- templates


def test_an_approved_template_goes_out_of_the_window(fake: GraphFake):
    fake.add_template("resultado_solicitud", language="es", body_params=2)

    answer = _send(
        fake, _template("resultado_solicitud", ["congelar cuota", "aprobada"])
    )

    assert answer.status_code == 200
    message = answer.json()["messages"][0]
    assert message["message_status"] == "accepted"
    long_enough = _template("resultado_solicitud", ["a" * 1000, "b" * 23])
    assert _send(fake, long_enough).status_code == 200
    assert [e["failure"] for e in fake.sent] == [None, None]
    assert fake.sent[0]["type"] == "template"
    statuses = [_statuses(hook)[0] for hook in fake.status_callbacks_for(message["id"])]
    assert [s["status"] for s in statuses] == ["sent", "delivered", "read"]
    assert statuses[0]["pricing"]["category"] == "utility"


def test_templates_to_and_the_accounts_template_list(fake: GraphFake):
    fake.add_template("resultado_solicitud", language="es", body_params=2)
    fake.add_template("resultado_solicitud", language="en_US", status="PAUSED")
    _send(fake, _template("resultado_solicitud", ["baja temporal", "denegada"]))

    assert fake.templates_to(MEMBER) == [
        ("resultado_solicitud", "es", ["baja temporal", "denegada"])
    ]
    url = f"{fake.base_url}/{VERSION}/{fake.waba_id}/message_templates"
    listed = httpx.get(url, params={"name": "resultado"}, headers=_auth(fake)).json()
    assert sorted((t["language"], t["status"]) for t in listed["data"]) == [
        ("en_US", "PAUSED"),
        ("es", "APPROVED"),
    ]
    assert listed["data"][0]["components"][0]["text"] == "{{1}} {{2}}"
    none = httpx.get(url, params={"name": "otra"}, headers=_auth(fake)).json()
    assert none["data"] == []


@pytest.mark.parametrize(
    ("status", "name", "language", "params", "http", "code"),
    [
        ("APPROVED", "otra", "es", ["a", "b"], 404, 132001),
        ("APPROVED", "aviso", "en_US", ["a", "b"], 404, 132001),
        ("PENDING", "aviso", "es", ["a", "b"], 404, 132001),
        ("PAUSED", "aviso", "es", ["a", "b"], 400, 132015),
        ("DISABLED", "aviso", "es", ["a", "b"], 400, 132016),
        ("APPROVED", "aviso", "es", ["a"], 400, 132000),
        ("APPROVED", "aviso", "es", ["a", "b", "c"], 400, 132000),
        ("APPROVED", "aviso", "es", ["a\nb", "c"], 400, 100),
        ("APPROVED", "aviso", "es", ["a     b", "c"], 400, 100),
        ("APPROVED", "aviso", "es", ["a" * 1000, "b" * 30], 400, 132005),
    ],
)
def test_template_refusals_are_synchronous(
    fake: GraphFake,
    status: str,
    name: str,
    language: str,
    params: list[str],
    http: int,
    code: int,
):
    fake.add_template("aviso", language="es", status=status, body_params=2)

    answer = _send(fake, _template(name, params, language))

    assert answer.status_code == http
    error = _error(answer)
    assert error["code"] == code
    assert error["message"].startswith(f"(#{code})")
    assert fake.sent == []


# -------------------------------------------------------------- mark as read


def test_mark_as_read_with_typing_indicator(fake: GraphFake):
    body, _ = fake.inbound_text(wa_id=MEMBER, text="hola")
    wamid = json.loads(body)["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
    read = {
        "messaging_product": "whatsapp",
        "status": "read",
        "message_id": wamid,
        "typing_indicator": {"type": "text"},
    }

    answer = _send(fake, read)

    assert (answer.status_code, answer.json()) == (200, {"success": True})
    assert fake.read_marks == [{"message_id": wamid, "typing": True}]
    unknown = _send(fake, {**read, "message_id": "wamid.nothing"})
    assert unknown.status_code == 400
    assert _error(unknown)["code"] == 100
    assert fake.sent == []


# ------------------------------------------------------------ status builders


def test_status_update_names_any_message_and_errors(fake: GraphFake):
    with pytest.raises(ValueError, match="recipient_id"):
        fake.status_update(wamid="wamid.unknown", status="delivered")
    with pytest.raises(ValueError, match="status"):
        fake.status_update(wamid="wamid.unknown", status="lost", recipient_id=MEMBER)

    body, headers = fake.status_update(
        wamid="wamid.unknown", status="read", recipient_id=MEMBER, timestamp=1700000000
    )
    (status,) = _statuses((body, headers))
    assert status == {
        "id": "wamid.unknown",
        "status": "read",
        "timestamp": "1700000000",
        "recipient_id": MEMBER,
    }
    assert headers["X-Hub-Signature-256"] == fake.sign(body)


def test_a_failed_status_carries_meta_error_objects(fake: GraphFake):
    webhook = fake.status_update(
        wamid="wamid.other", status="failed", recipient_id=MEMBER, errors=[131047]
    )
    (status,) = _statuses(webhook)
    (error,) = status["errors"]
    assert error["code"] == 131047
    assert error["title"] == error["message"] == "Re-engagement message"
    assert error["error_data"]["details"]
    assert error["href"].startswith("https://developers.facebook.com/")

    plain = _statuses(fake.status_update("wamid.x", "failed", recipient_id=MEMBER))
    assert plain[0]["errors"][0]["code"] == 131026


def test_a_burst_of_sends_is_answered_and_recorded_once_each(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    bodies = [f"respuesta {n}" for n in range(200)]

    url = f"{fake.base_url}/{VERSION}/{fake.phone_number_id}/messages"
    limits = httpx.Limits(max_connections=20)
    with (
        httpx.Client(headers=_auth(fake), timeout=60, limits=limits) as client,
        ThreadPoolExecutor(max_workers=20) as pool,
    ):
        answers = list(
            pool.map(lambda b: client.post(url, json=_text(MEMBER, b)), bodies)
        )

    assert {a.status_code for a in answers} == {200}
    assert sorted(fake.texts_to(MEMBER)) == sorted(bodies)
    assert len({e["wamid"] for e in fake.sent}) == 200


# ------------------------------------------------------------------- faults


def test_error_500_then_rate_limits_then_normal(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    fake.fault("error_500")
    fake.fault("unavailable")
    fake.fault("rate_limited", times=2)
    fake.fault("pair_rate_limited")

    answers = [_send(fake, _text(MEMBER, f"intento {n}")) for n in range(6)]

    assert [a.status_code for a in answers] == [500, 503, 400, 400, 400, 200]
    assert _error(answers[0])["is_transient"] is True
    assert [_error(a)["code"] for a in answers[1:5]] == [2, 130429, 130429, 131056]
    assert fake.texts_to(MEMBER) == ["intento 5"]
    assert fake.count("POST", "/messages") == 6


def test_a_fault_on_sends_spares_reads_of_the_number_and_read_marks(fake: GraphFake):
    body, _ = fake.inbound_text(wa_id=MEMBER, text="hola")
    wamid = json.loads(body)["entry"][0]["changes"][0]["value"]["messages"][0]["id"]
    fake.fault("error_500", on="send")
    read = {"messaging_product": "whatsapp", "status": "read", "message_id": wamid}

    number = httpx.get(
        f"{fake.base_url}/{VERSION}/{fake.phone_number_id}", headers=_auth(fake)
    )
    marked = _send(fake, read)
    spoiled = _send(fake, _text(MEMBER, "uno"))
    sent = _send(fake, _text(MEMBER, "dos"))

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
        _send(fake, _text(MEMBER, "¿llegó?"))

    assert fake.texts_to(MEMBER) == ["¿llegó?"]
    assert _send(fake, _text(MEMBER, "después")).status_code == 200


def test_slow_answers_after_the_delay_with_the_message_sent(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    fake.fault("slow", seconds=1.0)

    with pytest.raises(httpx.ReadTimeout):
        _send(fake, _text(MEMBER, "lento"), timeout=0.3)

    assert fake.texts_to(MEMBER) == ["lento"]


def test_refused_means_nothing_listens_for_a_while(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    fake.fault("refused", seconds=0.5)

    with pytest.raises(httpx.ConnectError):
        _send(fake, _text(MEMBER, "nadie"))

    assert fake.wait_listening(timeout=5)
    assert _send(fake, _text(MEMBER, "ya")).status_code == 200
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
