"""The fake Graph API's send endpoint, through a real HTTP client (httpx) on
loopback: its answers and errors, the 24-hour rule, templates, read marks and
the status webhooks."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.fakes.graph_calls import (
    HOUR,
    MEMBER,
    VERSION,
    auth,
    error_of,
    fake_running,
    send,
    statuses_of,
    template_payload,
    text_payload,
)
from tests.fakes.whatsapp_graph import (
    GraphFake,
)

fake = pytest.fixture(fake_running)

# --------------------------------------------------------------- sending text


def test_text_within_the_window_is_accepted_and_recorded(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")

    answer = send(fake, text_payload("+" + MEMBER, "¡Hola, Ana!"))

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

    statuses = [statuses_of(hook)[0] for hook in fake.status_callbacks_for(wamid)]
    assert [s["status"] for s in statuses] == ["sent", "delivered", "read"]
    assert {s["id"] for s in statuses} == {wamid}
    assert {s["recipient_id"] for s in statuses} == {MEMBER}
    assert statuses[0]["pricing"]["category"] == "service"
    assert "errors" not in statuses[0]


def test_text_longer_than_4096_characters_is_refused(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")

    too_long = send(fake, text_payload(MEMBER, "a" * 4097))

    assert too_long.status_code == 400
    error = error_of(too_long)
    assert error["code"] == 100
    assert error["error_data"]["messaging_product"] == "whatsapp"
    assert fake.sent == []
    assert send(fake, text_payload(MEMBER, "a" * 4096)).status_code == 200


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
    answer = send(fake, {**text_payload(MEMBER, "hola"), **change})
    assert answer.status_code == 400
    assert error_of(answer)["code"] == 100
    assert fake.sent == []


# ------------------------------------------------------------- 24-hour window


def test_free_form_text_outside_24_hours_fails_through_the_status_webhook(
    fake: GraphFake,
):
    never = send(fake, text_payload(MEMBER, "¿Sigues ahí?"))
    assert never.status_code == 200
    wamid = never.json()["messages"][0]["id"]

    callbacks = fake.status_callbacks_for(wamid)
    assert len(callbacks) == 1
    (status,) = statuses_of(callbacks[0])
    assert status["status"] == "failed"
    assert status["errors"][0]["code"] == 131047
    assert status["errors"][0]["title"] == "Re-engagement message"
    assert "pricing" not in status
    assert fake.sent[0]["failure"] == 131047


def test_the_window_is_24_hours_from_the_last_inbound_message(fake: GraphFake):
    fake.set_last_inbound(MEMBER, time.time() - 23.9 * HOUR)
    inside = send(fake, text_payload(MEMBER, "dentro")).json()["messages"][0]["id"]

    fake.set_last_inbound(MEMBER, time.time() - 24 * HOUR - 5)
    outside = send(fake, text_payload(MEMBER, "fuera")).json()["messages"][0]["id"]

    fake.inbound_text(wa_id=MEMBER, text="vuelvo")
    again = send(fake, text_payload(MEMBER, "otra vez")).json()["messages"][0]["id"]

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

    answer = send(fake, text_payload("34699000000", "hola"))

    assert answer.status_code == 200
    wamid = answer.json()["messages"][0]["id"]
    (status,) = statuses_of(fake.status_callbacks_for(wamid)[0])
    assert (status["status"], status["errors"][0]["code"]) == ("failed", 131026)


def test_recipient_outside_the_allowed_list_is_refused_at_once(fake: GraphFake):
    fake.allow_only(["34600000001"])
    answer = send(fake, text_payload(MEMBER, "hola"))
    assert answer.status_code == 400
    assert error_of(answer)["code"] == 131030
    assert fake.sent == []


# ---------------------------------------------------------------- templates


def test_an_approved_template_goes_out_of_the_window(fake: GraphFake):
    fake.add_template("resultado_solicitud", language="es", body_params=2)

    answer = send(
        fake, template_payload("resultado_solicitud", ["congelar cuota", "aprobada"])
    )

    assert answer.status_code == 200
    message = answer.json()["messages"][0]
    assert message["message_status"] == "accepted"
    long_enough = template_payload("resultado_solicitud", ["a" * 1000, "b" * 23])
    assert send(fake, long_enough).status_code == 200
    assert [e["failure"] for e in fake.sent] == [None, None]
    assert fake.sent[0]["type"] == "template"
    statuses = [
        statuses_of(hook)[0] for hook in fake.status_callbacks_for(message["id"])
    ]
    assert [s["status"] for s in statuses] == ["sent", "delivered", "read"]
    assert statuses[0]["pricing"]["category"] == "utility"


def test_templates_to_and_the_accounts_template_list(fake: GraphFake):
    fake.add_template("resultado_solicitud", language="es", body_params=2)
    fake.add_template("resultado_solicitud", language="en_US", status="PAUSED")
    send(fake, template_payload("resultado_solicitud", ["baja temporal", "denegada"]))

    assert fake.templates_to(MEMBER) == [
        ("resultado_solicitud", "es", ["baja temporal", "denegada"])
    ]
    url = f"{fake.base_url}/{VERSION}/{fake.waba_id}/message_templates"
    listed = httpx.get(url, params={"name": "resultado"}, headers=auth(fake)).json()
    assert sorted((t["language"], t["status"]) for t in listed["data"]) == [
        ("en_US", "PAUSED"),
        ("es", "APPROVED"),
    ]
    assert listed["data"][0]["components"][0]["text"] == "{{1}} {{2}}"
    none = httpx.get(url, params={"name": "otra"}, headers=auth(fake)).json()
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

    answer = send(fake, template_payload(name, params, language))

    assert answer.status_code == http
    error = error_of(answer)
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

    answer = send(fake, read)

    assert (answer.status_code, answer.json()) == (200, {"success": True})
    assert fake.read_marks == [{"message_id": wamid, "typing": True}]
    unknown = send(fake, {**read, "message_id": "wamid.nothing"})
    assert unknown.status_code == 400
    assert error_of(unknown)["code"] == 100
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
    (status,) = statuses_of((body, headers))
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
    (status,) = statuses_of(webhook)
    (error,) = status["errors"]
    assert error["code"] == 131047
    assert error["title"] == error["message"] == "Re-engagement message"
    assert error["error_data"]["details"]
    assert error["href"].startswith("https://developers.facebook.com/")

    plain = statuses_of(fake.status_update("wamid.x", "failed", recipient_id=MEMBER))
    assert plain[0]["errors"][0]["code"] == 131026


def test_a_burst_of_sends_is_answered_and_recorded_once_each(fake: GraphFake):
    fake.inbound_text(wa_id=MEMBER, text="hola")
    bodies = [f"respuesta {n}" for n in range(200)]

    url = f"{fake.base_url}/{VERSION}/{fake.phone_number_id}/messages"
    limits = httpx.Limits(max_connections=20)
    with (
        httpx.Client(headers=auth(fake), timeout=60, limits=limits) as client,
        ThreadPoolExecutor(max_workers=20) as pool,
    ):
        answers = list(
            pool.map(lambda b: client.post(url, json=text_payload(MEMBER, b)), bodies)
        )

    assert {a.status_code for a in answers} == {200}
    assert sorted(fake.texts_to(MEMBER)) == sorted(bodies)
    assert len({e["wamid"] for e in fake.sent}) == 200
