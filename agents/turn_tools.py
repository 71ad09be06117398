"""A step's tool calls: each through the dispatcher, in the database thread, with
the step's rows stored around them (``agents.turn``).
"""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext, override

from agents import limits
from agents.assistant import HANDOFF_TOOL
from agents.models import Message
from agents.providers.base import StepDone
from agents.turn_rows import (
    StepRows,
    TurnState,
    message_store,
    results_message,
    rows_store,
    usage_fields,
)
from agents.verdict import counts_for_verdict
from gymnasia.text import storable_json
from tools.context import CallContext
from tools.dispatcher import dispatch_tool_call
from tools.models import ToolCallLog
from tools.types import ToolCall, ToolResult


def tools_run(
    state: TurnState, step: StepDone, deferred: list[StepRows] | None
) -> tuple[list[ToolResult], StepRows | None, Message | None]:
    """A step's database work in one go (one hand-off to a database thread costs
    more than a query): each call through the dispatcher, then the step's rows.

    A step that may act (it proposes an offered write; ``deferred`` then holds the
    turn's deferred rows, maybe none) is stored before its calls run, after those
    rows, so that a write's log row, stored as it is
    claimed (R7, R9), points at it; its results follow at once. A step whose calls
    cannot act leaves its rows deferred (returned) to the turn's next write."""
    # The calls are dispatched as the model proposed them (the dispatcher refuses
    # what cannot be stored); the step is stored with such characters replaced.
    step_message = Message(
        conversation=state.conversation,
        role=Message.Role.STEP,
        **usage_fields(state, step),
        text=step.text,
        content=storable_json(
            {
                "tool_calls": [
                    {"id": c.id, "name": c.name, "arguments": c.arguments}
                    for c in step.tool_calls
                ],
                "provider_state": dict(step.provider_state),
            }
        ),
    )
    if deferred is not None:  # the step may act
        rows_store(deferred, last=step_message)
    unstored: list[ToolCallLog] = []
    results = []
    for call in step.tool_calls:
        result = _dispatch(state, call, step_message, unstored)
        if counts_for_verdict(call.name):
            state.writes.append((call.name, dict(result.payload)))
        results.append(result)
    rows = StepRows(
        step_message, results_message(state.conversation, results), unstored
    )
    if step_message.pk is None:
        return results, rows, None
    handed_over = any(
        call.name == HANDOFF_TOOL and result.status == "ok"
        for call, result in zip(step.tool_calls, results, strict=True)
    )
    with transaction.atomic():
        rows_store([rows])
        notice = _handed_over_notice(state) if handed_over else None
    if handed_over and state.conversation.member_id is None:
        limits.anonymous_handoff_counted(
            agent_id=state.conversation.agent_id, address=state.address
        )
    return results, None, notice


def _dispatch(
    state: TurnState, call: ToolCall, message: Message, unstored: list[ToolCallLog]
) -> ToolResult:
    context = CallContext(
        business=state.conversation.business,
        member=state.conversation.member,
        conversation_key=str(state.conversation.pk),
        message_key=str(message.pk) if message.pk else "",
        turn_key=state.turn_key,
        offered=state.selection.offered,
        unstored_logs=unstored,
    )
    return dispatch_tool_call(call, context)


def _handed_over_notice(state: TurnState) -> Message:
    with override(state.conversation.language):
        text = gettext(
            "A member of the gym's staff will look at this conversation and answer "
            "you here."
        )
    return message_store(state, [], Message.Role.NOTICE, text, {"reason": "handoff"})
