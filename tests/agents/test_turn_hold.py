"""A turn holds its conversation while it runs: taken with the member's message,
renewed when a long turn has held it for a while, let go with the reply."""

from __future__ import annotations

import datetime

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone

from agents import serial
from agents.conversations import conversation_start
from agents.models import Conversation
from agents.turn import turn_run
from gymnasia.gyms.models import Member
from tests.agents.scripted import Say

pytestmark = pytest.mark.django_db

SEARCH = ("search_foods", {"query": "arroz"})


@pytest.fixture
def takes(monkeypatch):
    """Each time a turn takes or renews its hold."""
    taken: list[str] = []

    def take(*, conversation_id, holder):
        taken.append(holder)
        return serial.conversation_turn_take(
            conversation_id=conversation_id, holder=holder
        )

    monkeypatch.setattr("agents.turn.conversation_turn_take", take)
    return taken


def a_turn_of_two_searches(agent, model) -> Conversation:
    model(Say(calls=[SEARCH]), Say(calls=[SEARCH]), Say(text="Listo."))
    member = Member.objects.get(external_id="socio-1001")
    conversation = conversation_start(agent=agent, member=member)
    async_to_sync(turn_run)(conversation, "hola")
    return conversation


def test_a_short_turn_takes_its_hold_once_and_lets_go(agent, model, takes):
    conversation = a_turn_of_two_searches(agent, model)

    assert len(takes) == 1
    conversation.refresh_from_db()
    assert (conversation.turn_holder, conversation.turn_until) == ("", None)


def test_a_long_turn_renews_its_hold(agent, model, takes, monkeypatch):
    """Held past a third of its lease, a turn renews it before its next step and
    its next tool calls (here at once: as if every step were long)."""
    monkeypatch.setattr("agents.turn.TURN_RENEW_AFTER", -1)

    conversation = a_turn_of_two_searches(agent, model)

    assert len(takes) > 1
    assert len(set(takes)) == 1  # the same turn's hold
    conversation.refresh_from_db()
    assert conversation.turn_holder == ""


def test_a_turn_goes_on_once_a_gone_holders_lease_has_passed(agent, model):
    """A turn whose process died left its hold: the next turn takes it once its
    lease has passed."""
    member = Member.objects.get(external_id="socio-1001")
    conversation = conversation_start(agent=agent, member=member)
    assert serial.conversation_turn_take(conversation_id=conversation.pk, holder="x")
    Conversation.objects.filter(pk=conversation.pk).update(
        turn_until=timezone.now() - datetime.timedelta(seconds=1)
    )
    model(Say(text="Hola."))

    added = async_to_sync(turn_run)(conversation, "hola")

    assert [m.text for m in added] == ["hola", "Hola."]
