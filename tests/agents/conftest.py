"""Fixtures of the agent tests."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agents.scripted import ScriptedProvider


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
