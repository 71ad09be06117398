"""What the fake Graph API's own tests share: a started fake, and requests to it
as Meta's reference writes them, through a real HTTP client (httpx)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from tests.fakes.whatsapp_graph import GraphFake

VERSION = "v23.0"
MEMBER = "34600111222"
HOUR = 3600.0


def fake_running() -> Iterator[GraphFake]:
    """A started fake Graph API (a module's ``fake`` fixture)."""
    started = GraphFake()
    try:
        yield started
    finally:
        started.close()


def auth(fake: GraphFake) -> dict[str, str]:
    return {"Authorization": f"Bearer {fake.access_token}"}


def send(fake: GraphFake, payload: dict[str, Any], **options: Any) -> httpx.Response:
    url = f"{fake.base_url}/{VERSION}/{fake.phone_number_id}/messages"
    return httpx.post(url, json=payload, headers=auth(fake), **options)


def text_payload(to: str, body: str) -> dict[str, Any]:
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "text",
        "text": {"body": body, "preview_url": False},
    }


def template_payload(
    name: str, params: list[str], language: str = "es"
) -> dict[str, Any]:
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


def error_of(response: httpx.Response) -> dict[str, Any]:
    error = response.json()["error"]
    assert {"message", "type", "code", "fbtrace_id"} <= error.keys()
    return error


def statuses_of(webhook: tuple[bytes, dict[str, str]]) -> list[dict[str, Any]]:
    body, _ = webhook
    return json.loads(body)["entry"][0]["changes"][0]["value"]["statuses"]
