"""An anonymous visitor's requests for a person are bounded: each opens a case for
staff, and one address opened about 90 a minute (one per new conversation).
Past the limit the assistant is not offered a person for that turn (R3), so
nothing is opened and nobody is told a person was asked."""

from __future__ import annotations

import time

import pytest
import time_machine

from agents import limits
from tests.agents.api_client import identity, send, start
from tools.models import Handoff

pytestmark = pytest.mark.django_db

ASK = "Quiero hablar con una persona"


def _ask_from(client, agent, address: str, **start_body):
    started = start(client, agent, address=address, **start_body)
    return send(client, started, ASK, address=address).json()["messages"]


def test_one_address_opens_at_most_its_limit_of_cases_a_minute(client, agent):
    with time_machine.travel(time.time(), tick=False):  # one window
        replies = [
            _ask_from(client, agent, "203.0.113.7")[-1]["text"]
            for _ in range(limits.HANDOFFS_PER_ADDRESS + 2)
        ]
        elsewhere = _ask_from(client, agent, "198.51.100.9")[-1]["text"]

    assert Handoff.objects.count() == limits.HANDOFFS_PER_ADDRESS + 1
    told = "He avisado al equipo; te responderán aquí."
    assert (
        replies[: limits.HANDOFFS_PER_ADDRESS] == [told] * limits.HANDOFFS_PER_ADDRESS
    )
    assert all(told not in reply for reply in replies[limits.HANDOFFS_PER_ADDRESS :])
    assert elsewhere == told  # another address is not held back


def test_one_agent_opens_at_most_its_limit_of_anonymous_cases(
    client, agent, monkeypatch
):
    monkeypatch.setattr(limits, "HANDOFFS_PER_AGENT", 3)
    with time_machine.travel(time.time(), tick=False):  # one window
        for n in range(5):
            _ask_from(client, agent, f"203.0.113.{n + 1}")
        # A member the gym knows is not an anonymous visitor: not bounded so.
        _ask_from(
            client,
            agent,
            "203.0.113.99",
            identity_token=identity(agent, sub="socio-1001"),
        )

    assert Handoff.objects.filter(member__isnull=True).count() == 3
    assert Handoff.objects.filter(member__isnull=False).count() == 1
