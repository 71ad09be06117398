"""The ASGI application serves Meta's webhook without a thread of its own per
request (``gymnasia.handlers``), and every other path as Django does."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from django.core.signals import request_started

from agents.models import WhatsAppInbound
from agents.whatsapp.services import whatsapp_webhook_path
from gymnasia.handlers import Handler
from tests.agents.whatsapp_kit import Turns, connect

pytestmark = pytest.mark.django_db(transaction=True)


async def _served(path: str, body: bytes, headers: dict[str, str]) -> int:
    """The status of one POST through the application, as uvicorn calls it."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"testserver"),
            (b"content-length", str(len(body)).encode()),
            *((k.lower().encode(), v.encode()) for k, v in headers.items()),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 443),
    }
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()  # the client stays (Django listens for it)
        raise AssertionError

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await Handler()(scope, receive, send)
    return int(sent[0]["status"])


@pytest.fixture
def started_on():
    """The name of the thread each request's ``request_started`` ran on."""
    names: list[str] = []

    def seen(**_: Any) -> None:
        names.append(threading.current_thread().name)

    request_started.connect(seen)
    yield names
    request_started.disconnect(seen)


def test_webhook_deliveries_share_one_thread_and_are_stored(
    agent, graph, monkeypatch, started_on
):
    turns = Turns(monkeypatch, None)
    path = whatsapp_webhook_path(connect(agent, graph))
    first = graph.inbound_text("34600000001", "Hola")
    second = graph.inbound_text("34600000002", "Buenas")

    statuses = [asyncio.run(_served(path, *d)) for d in (first, second)]

    assert statuses == [200, 200]
    assert WhatsAppInbound.objects.count() == 2
    assert sorted(turns.queued) == sorted(
        WhatsAppInbound.objects.values_list("pk", flat=True)
    )
    assert len(started_on) == 2 and started_on[0] == started_on[1]


def test_a_missigned_delivery_through_the_application_stores_nothing(
    agent, graph, monkeypatch
):
    turns = Turns(monkeypatch, None)
    path = whatsapp_webhook_path(connect(agent, graph))
    body, headers = graph.inbound_text("34600000001", "Hola")
    headers = {**headers, "X-Hub-Signature-256": "sha256=" + "0" * 64}

    assert asyncio.run(_served(path, body, headers)) == 401
    assert WhatsAppInbound.objects.count() == 0
    assert turns.queued == []


def test_other_paths_run_on_a_thread_of_each_request(started_on):
    statuses = [asyncio.run(_served("/no-such-page/", b"", {})) for _ in range(2)]

    assert statuses == [404, 404]
    assert len(started_on) == 2 and started_on[0] != started_on[1]
