"""The model reads a conversation's last turns (the agent's ``history_turns``):
whole turns from the member's message that opens the first of them, each step
with its results; the rest stays in the conversation."""

from __future__ import annotations

from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.conversations import conversation_history, conversation_start
from agents.models import Agent, Conversation, Message
from agents.providers.base import AssistantStep, ToolResults, UserText
from agents.turn import turn_run
from gymnasia.gyms.models import Member
from tests.agents.scripted import Say

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation():
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    member = Member.objects.get(external_id="socio-1001")
    return conversation_start(agent=agent, member=member)


def turns(conversation, model, count: int, *, start: int = 1) -> None:
    """``count`` turns, each a search then an answer."""
    for n in range(start, start + count):
        model(
            Say(calls=[("search_foods", {"query": f"arroz {n}"})]),
            Say(text=f"Respuesta {n}"),
        )
        async_to_sync(turn_run)(conversation, f"Pregunta {n}")


def said(history) -> list[str]:
    """The history as short labels: what each item is and says."""
    labels = []
    for item in history:
        if isinstance(item, UserText):
            labels.append(f"member: {item.text}")
        elif isinstance(item, AssistantStep) and item.tool_calls:
            labels.append(f"calls: {item.tool_calls[0].arguments['query']}")
        elif isinstance(item, AssistantStep):
            labels.append(f"reply: {item.text}")
        else:
            assert isinstance(item, ToolResults)
            labels.append(f"results: {item.results[0].call_id}")
    return labels


def test_the_model_reads_the_last_turns_whole(conversation, model):
    Agent.objects.update(history_turns=2)
    conversation.refresh_from_db()
    turns(conversation, model, 4)
    stored = Message.objects.filter(conversation=conversation).count()

    provider = model(Say(text="Vale."))
    async_to_sync(turn_run)(conversation, "Pregunta 5")

    (request,) = provider.requests
    assert said(request.history) == [
        "member: Pregunta 4",
        "calls: arroz 4",
        f"results: {request.history[1].tool_calls[0].id}",
        "reply: Respuesta 4",
        "member: Pregunta 5",
    ]
    # Nothing older is lost: the conversation keeps every message.
    assert Message.objects.filter(conversation=conversation).count() == stored + 2


def test_a_conversation_shorter_than_the_window_is_read_whole(conversation, model):
    Agent.objects.update(history_turns=5)
    conversation.refresh_from_db()
    turns(conversation, model, 2)

    history = said(conversation_history(conversation))

    assert history[0] == "member: Pregunta 1"
    assert [h for h in history if h.startswith("member")] == [
        "member: Pregunta 1",
        "member: Pregunta 2",
    ]
    assert len(history) == 8


def test_the_history_is_one_query_however_long_the_conversation(conversation):
    """Reading it costs the same for 5 turns and for 300, and the items read are
    those of the window only."""
    Agent.objects.update(history_turns=3)
    conversation = Conversation.objects.select_related("agent").get(pk=conversation.pk)

    def grow(first: int, last: int) -> None:
        Message.objects.bulk_create(
            m
            for n in range(first, last)
            for m in (
                Message(conversation=conversation, role="member", text=f"P{n}"),
                Message(
                    conversation=conversation,
                    role="assistant",
                    text=f"R{n}",
                    content={"model_text": f"R{n}"},
                ),
            )
        )

    grow(0, 5)
    with CaptureQueriesContext(connection) as short:
        assert len(conversation_history(conversation)) == 6
    grow(5, 300)
    with CaptureQueriesContext(connection) as long:
        history = conversation_history(conversation)

    assert len(long.captured_queries) == len(short.captured_queries) == 1
    assert said(history) == [
        "member: P297",
        "reply: R297",
        "member: P298",
        "reply: R298",
        "member: P299",
        "reply: R299",
    ]
