"""The turn: a member's message becomes the assistant's reply.

Read top to bottom, ``turn_run`` is the whole loop (R1, R3, R10, R11):

1. store the member's message (it is never lost, whatever happens next);
2. the three filters decide the tools offered this turn, fixed for the turn;
3. the provider is asked for a step, streamed; rate limits, overloads and network
   failures are retried a bounded number of times;
4. a step that proposes tool calls: each goes through the dispatcher, its result goes
   back under its own call id, and the loop asks for the next step (at most the
   agent's maximum of tool steps); text streamed in such a step is discarded. A
   step that may act is stored before its calls run; the rows of steps that could
   not (reads, refused calls) wait and are written with the turn's next row;
5. the final step's text is the reply, with the verdict sentences of R10 in front;
6. when the model cannot be reached, an honest notice says so.

Events for a streaming client: ``delta``, ``discard``, ``message``, ``error``, and
the caller sends ``done`` last.

The loop and the turn's hold on its conversation are here; a step streamed is
``agents.turn_stream``'s, a step's tool calls ``agents.turn_tools``', and the
turn's state and the rows it stores ``agents.turn_rows``'.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace
from typing import Any

from django.db import transaction
from django.utils.translation import gettext, override

from agents import limits
from agents.assistant import (
    HANDOFF_TOOL,
    cache_key_for,
    instructions_for,
    provider_for,
)
from agents.conversations import conversation_history, message_add, message_json
from agents.database import db_call
from agents.models import Conversation, Message
from agents.providers.base import (
    AssistantStep,
    ModelRequest,
    Provider,
    ProviderError,
    StepDone,
    ToolResults,
)
from agents.serial import (
    TURN_POLL_SECONDS,
    TURN_RENEW_AFTER,
    conversation_turn_release,
    conversation_turn_take,
)
from agents.turn_budget import budget_read, budget_used_up, over_budget, step_counted
from agents.turn_rows import (
    StepRows,
    TurnState,
    let_go,
    message_store,
    results_message,
    rows_store,
    usage_fields,
)
from agents.turn_stream import Emit, ignore, stream_step
from agents.turn_tools import tools_run
from agents.verdict import verdict_cases, verdict_prefix
from tools.selection import offered_tools
from tools.types import ToolCall, ToolResult, ToolSpec

HANDOFFS_USED_UP = "too many requests for a person from this place this minute"


def _prepare(
    conversation: Conversation, text: str, holder: str, address: str = ""
) -> tuple[TurnState, Message, str] | None:
    """Everything of a turn's start that reads or writes the database, once the
    turn holds its conversation (None: another turn holds it still). An
    anonymous visitor whose address, or whose agent, had too many cases opened
    for staff this minute is not offered a person this turn (R3: a tool that
    cannot work is not offered)."""
    # The hold and the member's message together, or neither.
    with transaction.atomic():
        if not conversation_turn_take(conversation_id=conversation.pk, holder=holder):
            return None
        member_message = message_add(
            conversation=conversation, role=Message.Role.MEMBER, text=text
        )
    selection = offered_tools(conversation.agent, conversation.member)
    anonymous = conversation.member_id is None
    if (
        anonymous
        and HANDOFF_TOOL in selection.offered
        and not limits.anonymous_handoffs_allowed(
            agent_id=conversation.agent_id, address=address
        )
    ):
        offered = {k: v for k, v in selection.offered.items() if k != HANDOFF_TOOL}
        excluded = {**selection.excluded, HANDOFF_TOOL: HANDOFFS_USED_UP}
        selection = replace(selection, offered=offered, excluded=excluded)
    state = TurnState(
        conversation=conversation,
        selection=selection,
        history=list(conversation_history(conversation)),
        turn_key=str(member_message.pk),
        holder=holder,
        address=address if anonymous else "",
    )
    state.messages.append(member_message)
    budget_read(state)
    instructions = instructions_for(conversation.agent, conversation, selection.offered)
    return state, member_message, instructions


def _hold_due(state: TurnState) -> bool:
    return bool(state.holder) and (
        time.monotonic() - state.held_since > TURN_RENEW_AFTER
    )


def _hold_renewed(state: TurnState) -> None:
    """A long turn keeps its conversation: its hold is renewed once a third of
    it has passed (renewing it at every step cost a 40-call turn's steps 2 ms
    each, in ``bench_tool_calls``)."""
    if _hold_due(state):
        conversation_turn_take(
            conversation_id=state.conversation.pk, holder=state.holder
        )
        state.held_since = time.monotonic()


async def turn_run(
    conversation: Conversation, text: str, emit: Emit = ignore, *, address: str = ""
) -> list[Message]:
    """Run one turn; return the visible messages it added, the member's first.
    It waits for a turn of the conversation still running (``agents.serial``).
    ``address``: the client's, which bounds an anonymous visitor's requests for
    a person."""
    holder = uuid.uuid4().hex
    try:
        while (
            prepared := await db_call(_prepare, conversation, text, holder, address)
        ) is None:
            await asyncio.sleep(TURN_POLL_SECONDS)
    except BaseException:
        await _give_back(conversation, holder)
        raise
    state, member_message, instructions = prepared
    await emit("message", message_json(member_message))
    await _run(state, instructions, emit)
    return state.messages


async def turn_continue(
    conversation: Conversation,
    *,
    call: ToolCall,
    result: ToolResult,
    unanswered: str,
    about: dict[str, Any],
) -> list[Message]:
    """Go on with a conversation whose request staff reviewed, as a member's turn
    goes on after a step: the call and its result join the history under the
    call's id, and the loop asks the model to tell the member, from that result,
    with R10's sentence in front when it was not verified (the turn judges it as
    one of its own writes); ``unanswered`` is said in place of the model's words
    when the model cannot be reached; ``about`` marks the rows it adds (which
    request they tell of). Returns the visible messages it added."""
    holder = uuid.uuid4().hex
    try:
        while (
            state := await db_call(
                _continuation_prepare, conversation, call, result, holder
            )
        ) is None:
            await asyncio.sleep(TURN_POLL_SECONDS)
    except BaseException:
        await _give_back(conversation, holder)
        raise
    state.unanswered, state.about = unanswered, about
    instructions = instructions_for(
        conversation.agent, conversation, state.selection.offered
    )
    await _run(state, instructions + STAFF_REVIEWED, ignore)
    return state.messages


async def _give_back(conversation: Conversation, holder: str) -> None:
    """A turn stopped while it waited: the conversation, if it took it, is free."""
    await db_call(
        conversation_turn_release, conversation_id=conversation.pk, holder=holder
    )


STAFF_REVIEWED = (
    " The gym's staff reviewed a request of the member; its result is the last "
    "tool result. Tell the member what happened, from that result only."
)


def _continuation_prepare(
    conversation: Conversation, call: ToolCall, result: ToolResult, holder: str
) -> TurnState | None:
    if not conversation_turn_take(conversation_id=conversation.pk, holder=holder):
        return None
    step = Message(
        conversation=conversation,
        role=Message.Role.STEP,
        content={
            "tool_calls": [
                {"id": call.id, "name": call.name, "arguments": call.arguments}
            ],
            "provider_state": {},
        },
    )
    # The step and its result together: a history never holds one without the other.
    with transaction.atomic():
        rows_store([StepRows(step, results_message(conversation, [result]), [])])
    state = TurnState(
        conversation=conversation,
        selection=offered_tools(conversation.agent, conversation.member),
        history=list(conversation_history(conversation)),
        writes=[(call.name, dict(result.payload))],
        holder=holder,
    )
    budget_read(state)
    return state


async def _run(state: TurnState, instructions: str, emit: Emit) -> None:
    provider = provider_for(state.conversation.agent, state.conversation)
    state.model = getattr(provider, "model", "") or provider.name
    tools = tuple(state.selection.specs())
    try:
        await _loop(state, provider, instructions, tools, emit)
    finally:
        # A turn stopped early (cancelled, or a bug) still leaves its steps' rows,
        # and lets go of its conversation.
        if state.deferred or state.holder:
            await db_call(_rows_stored_and_let_go, state, state.deferred_taken())


def _rows_stored_and_let_go(state: TurnState, rows: list[StepRows]) -> None:
    rows_store(rows)
    let_go(state)


async def _loop(
    state: TurnState,
    provider: Provider,
    instructions: str,
    tools: tuple[ToolSpec, ...],
    emit: Emit,
) -> None:
    conversation = state.conversation
    steps_left = conversation.agent.max_tool_steps
    while True:
        if _hold_due(state):  # before a step that may be slow (retries included)
            await db_call(_hold_renewed, state)
        prefix = verdict_prefix(verdict_cases(state.writes), conversation.language)
        if budget_used_up(state):
            await over_budget(state, prefix, emit)
            return
        request = ModelRequest(
            instructions=instructions,
            history=tuple(state.history),
            tools=tools,
            max_output_tokens=conversation.agent.max_output_tokens,
            cache_key=cache_key_for(conversation),
        )
        try:
            step = await stream_step(provider, request, prefix, emit)
        except ProviderError as error:
            await _unavailable(state, prefix, error, emit)
            return
        step_counted(state, step)
        if not step.tool_calls:
            reply = prefix + step.text
            message = await db_call(
                message_store,
                state,
                state.deferred_taken(),
                Message.Role.ASSISTANT,
                reply,
                {
                    **state.about,
                    "model_text": step.text,
                    "verdict": verdict_cases(state.writes),
                },
                last=True,
                usage=usage_fields(state, step),
            )
            await emit("message", message_json(message))
            return
        # The step's text came with tool calls: it is not the reply, whether the
        # calls run or the turn is out of steps.
        await emit("discard", {})
        if steps_left <= 0:
            await _out_of_steps(state, prefix, emit)
            return
        steps_left -= 1
        await _run_tools(state, step, emit)


async def _run_tools(state: TurnState, step: StepDone, emit: Emit) -> None:
    """Dispatch every call of a step; their results go back under their call ids.

    A case handed to staff at the member's request is also told in fixed words (a
    notice), so the member sees it as handed over whatever the model writes."""
    acts = any(state.selection.offers_write(call.name) for call in step.tool_calls)
    deferred = state.deferred_taken() if acts else None
    results, rows, notice = await db_call(_tools_run, state, step, deferred)
    if rows is not None:
        state.deferred.append(rows)
    state.history.append(
        AssistantStep(
            text=step.text,
            tool_calls=step.tool_calls,
            provider_state=step.provider_state,
        )
    )
    state.history.append(ToolResults(tuple(results)))
    if notice is not None:
        await emit("message", message_json(notice))


def _tools_run(
    state: TurnState, step: StepDone, deferred: list[StepRows] | None
) -> tuple[list[ToolResult], StepRows | None, Message | None]:
    """The step's database work (``agents.turn_tools``), in one hand-off to the
    database thread: the turn's hold renewed first, when due."""
    _hold_renewed(state)
    return tools_run(state, step, deferred)


async def _unavailable(
    state: TurnState, prefix: str, error: ProviderError, emit: Emit
) -> None:
    """The model could not answer: say so honestly, after any verdict that is due."""
    with override(state.conversation.language):
        text = prefix + (
            state.unanswered
            or gettext(
                "The assistant is unavailable right now. Your message is saved; "
                "please try again in a moment."
            )
        )
    await _last_notice(state, text, error.kind, emit, failed=True)


async def _out_of_steps(state: TurnState, prefix: str, emit: Emit) -> None:
    with override(state.conversation.language):
        text = prefix + gettext(
            "I could not finish this request. Please try again, or ask to talk to a person."
        )
    await _last_notice(state, text, "max_tool_steps", emit)


async def _last_notice(
    state: TurnState, text: str, reason: str, emit: Emit, *, failed: bool = False
) -> None:
    """The turn ends with fixed words of ours, stored with the rows still deferred;
    when the model ``failed``, the stream's error event comes first, once stored."""
    message = await db_call(
        message_store,
        state,
        state.deferred_taken(),
        Message.Role.NOTICE,
        text,
        {"reason": reason},
        last=True,
    )
    if failed:
        await emit("error", {"error": "assistant_unavailable", "detail": text})
    await emit("message", message_json(message))
