"""One turn at a time in a conversation, across threads as across processes: the
member's turns and the continuation of a request staff reviewed never interleave,
and each reads a history in the order things happened."""

from __future__ import annotations

import asyncio
import re
import threading
from contextlib import aclosing
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.db import connection

from agents.assistant import provider_for
from agents.conversations import conversation_start
from agents.models import Agent, Conversation, Message
from agents.serial import conversation_turn_release, conversation_turn_take
from agents.turn import turn_run
from agents.verdict import SENTENCES
from approvals.services import pending_action_approve, pending_action_execute
from gymnasia.gyms.models import Member
from gymnasia.nutrition.models import MealEntry
from tests.factories import StaffRoleFactory
from tools.models import ToolCallLog

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.usefixtures("no_broker"),
]


@pytest.fixture
def no_broker(monkeypatch):
    monkeypatch.setattr(
        "approvals.tasks.execute_approved_action.delay", lambda action_id: None
    )


@pytest.fixture
def conversation() -> Conversation:
    call_command("seed_demo", stdout=StringIO())
    member = Member.objects.get(external_id="socio-1001")
    return conversation_start(agent=Agent.objects.get(), member=member)


def fresh(conversation: Conversation) -> Conversation:
    return Conversation.objects.select_related("agent", "business", "member").get(
        pk=conversation.pk
    )


def at_once(*works) -> list[object]:
    """Run the works in threads released together; what each returned or raised."""
    barrier = threading.Barrier(len(works))
    outcomes: list[object] = [None] * len(works)

    def run(index, work):
        try:
            barrier.wait()
            outcomes[index] = work()
        except Exception as error:
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=item) for item in enumerate(works)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return outcomes


ROLE_LETTERS = {"member": "M", "step": "S", "tool_results": "R", "assistant": "A"}
#: Whole turns one after the other: a member's (her message, its steps, their
#: results, the reply) or a reviewed request's (its call, its result, the reply).
WHOLE_TURNS = re.compile(r"((M(SR)*N*A)|(CR(SR)*N*A))*")


def rows_in_order(conversation: Conversation) -> str:
    """The conversation's rows as letters, a reviewed request's call as ``C``."""
    letters = []
    for message in Message.objects.filter(conversation=conversation).order_by("pk"):
        calls = message.content.get("tool_calls", [])
        if calls and str(calls[0]["id"]).startswith("approved_"):
            letters.append("C")
        else:
            letters.append(ROLE_LETTERS.get(message.role, "N"))
    return "".join(letters)


def test_ten_identical_messages_at_once_make_one_entry_and_no_reply_says_failed(
    conversation,
):
    text = "Apúntame 100 g de arroz blanco en la comida"
    entries = MealEntry.objects.count()

    outcomes = at_once(
        *[lambda: async_to_sync(turn_run)(fresh(conversation), text)] * 10
    )

    assert not [o for o in outcomes if isinstance(o, Exception)]
    assert MealEntry.objects.count() == entries + 1
    replies = Message.objects.filter(
        conversation=conversation, role=Message.Role.ASSISTANT
    )
    assert replies.count() == 10
    for reply in replies:
        assert SENTENCES["es"]["not_done"] not in reply.text
        assert "fallado" not in reply.text.lower()
    # Each turn is whole: the member's message, its steps, its reply, in order.
    assert WHOLE_TURNS.fullmatch(rows_in_order(conversation))


class Slow:
    """The conversation's own model, a third of a second slower to begin each
    step: time for the other turn to come in."""

    name = "slow"

    def __init__(self, inner) -> None:
        self.inner = inner

    async def stream(self, request):
        await asyncio.sleep(0.3)
        async with aclosing(self.inner.stream(request)) as events:
            async for event in events:
                yield event


def test_a_message_sent_while_an_outcome_is_written_is_answered_after_it(
    conversation, monkeypatch
):
    """Both are answered, each in one piece, the outcome told once; the member's
    turn reads the outcome before her message, never in the middle of it."""
    async_to_sync(turn_run)(fresh(conversation), "Congela mi cuota en agosto")
    monkeypatch.setattr(
        "agents.turn.provider_for",
        lambda agent, conversation: Slow(provider_for(agent, conversation)),
    )
    action = ToolCallLog.objects.get(expires_at__isnull=False)
    staff = StaffRoleFactory(business=conversation.business, role="staff").user
    pending_action_approve(action_id=action.pk, user=staff)
    # Another turn holds the conversation while both arrive.
    assert conversation_turn_take(conversation_id=conversation.pk, holder="other")
    started = threading.Event()

    def outcome():
        started.set()
        return pending_action_execute(action_id=action.pk)

    def message():
        started.wait(10)
        return async_to_sync(turn_run)(fresh(conversation), "¿Qué clases hay mañana?")

    def release():
        started.wait(10)
        threading.Event().wait(0.5)  # both are waiting now
        conversation_turn_release(conversation_id=conversation.pk, holder="other")

    outcomes = at_once(outcome, message, release)

    assert outcomes[0] == "succeeded"
    assert not isinstance(outcomes[1], Exception)
    told = Message.objects.filter(
        conversation=conversation, content__approved_action=str(action.pk)
    )
    assert told.filter(role=Message.Role.ASSISTANT).count() == 1
    rows = rows_in_order(conversation)
    assert WHOLE_TURNS.fullmatch(rows), rows
    assert rows.count("C") == 1
    asked = Message.objects.get(text="¿Qué clases hay mañana?")
    reply = Message.objects.filter(
        conversation=conversation, role=Message.Role.ASSISTANT, pk__gt=asked.pk
    ).first()
    assert reply is not None
    assert "approved_action" not in reply.content
    assert Conversation.objects.get(pk=conversation.pk).turn_holder == ""
