"""Fixtures of the agent tests."""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from agents.models import Agent
from tests.agents.scripted import ScriptedProvider
from tests.agents.whatsapp_kit import Turns, connect, graph_running
from tests.fakes.llm_server import FakeLLM, running_fake_llm
from tests.fakes.mindbody_server import mindbody_fake, mindbody_settings  # noqa: F401


@pytest.fixture
def model(monkeypatch):
    """Install a scripted model for the next turns."""

    def install(*steps: Any) -> ScriptedProvider:
        provider = ScriptedProvider(list(steps))
        monkeypatch.setattr(
            "agents.turn.provider_for", lambda agent, conversation: provider
        )
        return provider

    return install


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeLLM]:
    with running_fake_llm() as fake:
        yield fake


@pytest.fixture
def fake(fake_server: FakeLLM) -> FakeLLM:
    """The shared fake, with no scripts and no recorded requests."""
    fake_server.reset()
    return fake_server


@pytest.fixture
def agent() -> Agent:
    """The demo gym's agent, seeded (a module may dress it its own way)."""
    call_command("seed_demo", stdout=StringIO())
    return Agent.objects.get()


#: A fake Graph API the settings allow, for the WhatsApp tests.
graph = pytest.fixture(graph_running)


@pytest.fixture
def channel(agent, graph):
    """The demo agent's WhatsApp channel on the fake's number (``whatsapp_kit``)."""
    return connect(agent, graph)


@pytest.fixture
def turns(monkeypatch, django_capture_on_commit_callbacks):
    """The WhatsApp turns the webhook enqueues, run when a test says."""
    return Turns(monkeypatch, django_capture_on_commit_callbacks)
