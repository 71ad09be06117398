"""Calls of the conversation API v1 as a client makes them, through Django's test
client, and identity tokens as a gym's backend signs them."""

from __future__ import annotations

import time
from typing import Any

import jwt

from agents.models import Agent


def identity(agent: Agent, sub: str = "socio-1001", **claims: Any) -> str:
    """A valid identity token for the demo member ``sub`` (``claims`` added)."""
    payload = {
        "sub": sub,
        "aud": agent.public_key,
        "exp": int(time.time()) + 600,
        **claims,
    }
    return jwt.encode(payload, agent.identity_secret, algorithm="HS256")


def start(client: Any, agent: Agent, *, address: str = "127.0.0.1", **body: Any) -> Any:
    """Start a conversation from ``address`` (the client's, as the server sees it)."""
    return client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key, **body},
        content_type="application/json",
        REMOTE_ADDR=address,
    )


def send(
    client: Any,
    started: Any,
    text: str,
    token: str | None = None,
    accept: str = "application/json",
    address: str = "127.0.0.1",
) -> Any:
    data = started.json()
    return client.post(
        f"/api/v1/conversations/{data['conversation']}/messages",
        {"text": text},
        content_type="application/json",
        headers={"Authorization": f"Bearer {token or data['token']}", "Accept": accept},
        REMOTE_ADDR=address,
    )
