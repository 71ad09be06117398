"""A turn's state and its rows: the messages a turn stores, in order, with its
calls' log rows, and the end of its hold on the conversation (``agents.turn``).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import transaction

from agents.budget import Budget, Spend
from agents.conversations import messages_insert
from agents.models import Conversation, Message
from agents.providers.base import HistoryItem, StepDone
from agents.serial import conversation_turn_release
from tools.models import ToolCallLog
from tools.selection import ToolSelection
from tools.types import ToolResult


@dataclass
class StepRows:
    """The rows one step leaves: the step, its results, and its calls' log rows
    that were not stored as they ran."""

    step: Message
    results: Message
    logs: list[ToolCallLog]


@dataclass
class TurnState:
    conversation: Conversation
    selection: ToolSelection
    history: list[HistoryItem]
    #: The turn's calls of write tools and their results, which R10 judges (reads
    #: never count, and a turn may make hundreds).
    writes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    #: The member's message the turn answers (a write's ``again`` is honoured
    #: once per such message: R7).
    turn_key: str = ""
    #: Who holds the conversation's turn for this turn (``agents.serial``), and
    #: since when (``time.monotonic()``) it was last taken or renewed.
    holder: str = ""
    held_since: float = field(default_factory=time.monotonic)
    #: What the turn says when the model cannot answer, after any verdict (a
    #: member's turn: that the assistant is unavailable).
    unanswered: str = ""
    #: What the turn's step and reply tell of, beyond the member's message.
    about: dict[str, Any] = field(default_factory=dict)
    #: An anonymous visitor's address (for the limit on asking for a person).
    address: str = ""
    #: Rows of steps none of whose calls could act (reads, calls refused before
    #: running), kept until the turn next writes anything: the whole turn's steps
    #: then cost one transaction rather than one each.
    deferred: list[StepRows] = field(default_factory=list)
    #: The model the turn's steps ask ("offline" for the demo model).
    model: str = ""
    #: The agent's monthly budget, if it has one, and what the month has used
    #: of it with this turn's steps (``agents.turn_budget``).
    budget: Budget | None = None
    spent: Spend = field(default_factory=Spend)

    def deferred_taken(self) -> list[StepRows]:
        """The deferred rows, handed to whoever writes them next (called on the
        event loop, so that no two pieces of database work get the same rows)."""
        rows, self.deferred = self.deferred, []
        return rows


def usage_fields(state: TurnState, step: StepDone) -> dict[str, Any]:
    """A model step's row's model and tokens billed (none where unreported)."""
    tokens = asdict(step.usage) if step.usage is not None else {}
    return {"model": state.model, **tokens}


def message_store(
    state: TurnState,
    deferred: list[StepRows],
    role: str,
    text: str,
    content: dict[str, Any],
    *,
    last: bool = False,
    usage: dict[str, Any] | None = None,
) -> Message:
    """A message of the turn, in the statement that writes the steps' deferred
    rows, after them; the ``last`` of the turn lets go of its conversation."""
    message = Message(
        conversation=state.conversation,
        role=role,
        text=text,
        content=content,
        **(usage or {}),
    )
    if last:
        with transaction.atomic():  # the reply and the hold's end together
            rows_store(deferred, last=message)
            let_go(state)
    else:
        rows_store(deferred, last=message)
    if role in Message.VISIBLE:
        state.messages.append(message)
    return message


def let_go(state: TurnState) -> None:
    """The turn is over: the conversation's next turn may begin."""
    if state.holder:
        conversation_turn_release(
            conversation_id=state.conversation.pk, holder=state.holder
        )
        state.holder = ""


def rows_store(rows: list[StepRows], last: Message | None = None) -> None:
    """Steps' rows, then ``last``, in order, each log row pointing at its step;
    whole or not at all, in the caller's transaction if there is one
    (``messages_insert``)."""
    messages = [m for r in rows for m in (r.step, r.results) if m.pk is None]
    if last is not None:
        messages.append(last)
    if not messages:
        return
    logs = [log for r in rows for log in r.logs]
    messages_insert(messages, logs, [r.step for r in rows for _ in r.logs])


def results_message(conversation: Conversation, results: list[ToolResult]) -> Message:
    return Message(
        conversation=conversation,
        role=Message.Role.TOOL_RESULTS,
        content={
            "results": [
                {
                    "call_id": r.call_id,
                    "status": r.status,
                    "payload": dict(r.payload),
                    "is_error": r.is_error,
                }
                for r in results
            ]
        },
    )
