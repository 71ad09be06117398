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
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import transaction
from django.utils.translation import gettext, override

from agents import limits
from agents.assistant import HANDOFF_TOOL, instructions_for, provider_for
from agents.conversations import (
    conversation_history,
    message_add,
    message_json,
    messages_insert,
)
from agents.database import db_call
from agents.models import Conversation, Message
from agents.providers.base import (
    AssistantStep,
    HistoryItem,
    ModelRequest,
    Provider,
    ProviderError,
    StepDone,
    TextDelta,
    ToolResults,
)
from agents.serial import (
    TURN_POLL_SECONDS,
    TURN_RENEW_AFTER,
    conversation_turn_release,
    conversation_turn_take,
)
from agents.verdict import counts_for_verdict, verdict_cases, verdict_prefix
from gymnasia.text import storable_json, storable_text
from tools.dispatcher import CallContext, dispatch_tool_call
from tools.models import ToolCallLog
from tools.selection import ToolSelection, offered_tools
from tools.types import ToolCall, ToolResult, ToolSpec

Emit = Callable[[str, dict[str, Any]], Awaitable[None]]
MAX_PROVIDER_ATTEMPTS = 3
RETRYABLE = ("rate_limited", "overloaded", "unavailable")
HANDOFFS_USED_UP = "too many requests for a person from this place this minute"


async def _ignore(name: str, data: dict[str, Any]) -> None:
    return None


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
    waiting: list[StepRows] = field(default_factory=list)

    def waiting_taken(self) -> list[StepRows]:
        """The waiting rows, handed to whoever writes them next (called on the
        event loop, so that no two pieces of database work get the same rows)."""
        rows, self.waiting = self.waiting, []
        return rows


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
    instructions = instructions_for(conversation.agent, conversation, selection.offered)
    return state, member_message, instructions


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


def _store(
    state: TurnState,
    waiting: list[StepRows],
    role: str,
    text: str,
    content: dict[str, Any],
    *,
    last: bool = False,
) -> Message:
    """A message of the turn, in the statement that writes the steps' rows still
    waiting, after them; the ``last`` of the turn lets go of its conversation."""
    message = Message(
        conversation=state.conversation, role=role, text=text, content=content
    )
    if last:
        with transaction.atomic():  # the reply and the hold's end together
            _rows_store(waiting, last=message)
            _let_go(state)
    else:
        _rows_store(waiting, last=message)
    if role in Message.VISIBLE:
        state.messages.append(message)
    return message


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


def _let_go(state: TurnState) -> None:
    """The turn is over: the conversation's next turn may begin."""
    if state.holder:
        conversation_turn_release(
            conversation_id=state.conversation.pk, holder=state.holder
        )
        state.holder = ""


def _rows_store(rows: list[StepRows], last: Message | None = None) -> None:
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


async def turn_run(
    conversation: Conversation, text: str, emit: Emit = _ignore, *, address: str = ""
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
    await _run(state, instructions + STAFF_REVIEWED, _ignore)
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
        _rows_store([StepRows(step, _results_message(conversation, [result]), [])])
    return TurnState(
        conversation=conversation,
        selection=offered_tools(conversation.agent, conversation.member),
        history=list(conversation_history(conversation)),
        writes=[(call.name, dict(result.payload))],
        holder=holder,
    )


async def _run(state: TurnState, instructions: str, emit: Emit) -> None:
    provider = provider_for(state.conversation.agent, state.conversation)
    tools = tuple(state.selection.specs())
    try:
        await _loop(state, provider, instructions, tools, emit)
    finally:
        # A turn stopped early (cancelled, or a bug) still leaves its steps' rows,
        # and lets go of its conversation.
        if state.waiting or state.holder:
            await db_call(_rows_stored_and_let_go, state, state.waiting_taken())


def _rows_stored_and_let_go(state: TurnState, rows: list[StepRows]) -> None:
    _rows_store(rows)
    _let_go(state)


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
        request = ModelRequest(
            instructions=instructions,
            history=tuple(state.history),
            tools=tools,
            max_output_tokens=conversation.agent.max_output_tokens,
        )
        try:
            step = await _stream_step(provider, request, prefix, emit)
        except ProviderError as error:
            await _unavailable(state, prefix, error, emit)
            return
        if not step.tool_calls:
            reply = prefix + step.text
            message = await db_call(
                _store,
                state,
                state.waiting_taken(),
                Message.Role.ASSISTANT,
                reply,
                {
                    **state.about,
                    "model_text": step.text,
                    "verdict": verdict_cases(state.writes),
                },
                last=True,
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


async def _stream_step(
    provider: Provider, request: ModelRequest, prefix: str, emit: Emit
) -> StepDone:
    """One step, retried on transient provider errors; the verdict leads its text."""
    for attempt in range(1, MAX_PROVIDER_ATTEMPTS + 1):
        streamed = False
        if prefix:
            await emit("delta", {"text": prefix})
            streamed = True
        try:
            async with aclosing(provider.stream(request)) as events:
                # What the model writes is stored and read as it came, except for
                # characters no database column takes (NUL, lone surrogates).
                async for event in events:
                    if isinstance(event, TextDelta) and event.text:
                        await emit("delta", {"text": storable_text(event.text)})
                        streamed = True
                    elif isinstance(event, StepDone):
                        text = storable_text(event.text)
                        if not event.tool_calls and not text.strip():
                            # Nothing to show nor to run: no answer, not a reply.
                            raise ProviderError(
                                "cut_off",
                                "the provider's step had neither text nor calls",
                            )
                        return replace(event, text=text)
            raise ProviderError(
                "cut_off", "the provider ended the step without finishing it"
            )
        except ProviderError as error:
            if streamed:
                await emit("discard", {})
            if error.kind not in RETRYABLE or attempt == MAX_PROVIDER_ATTEMPTS:
                raise
            wait = (
                error.retry_after
                if error.retry_after is not None
                else 0.5 * 2 ** (attempt - 1)
            )
            await asyncio.sleep(min(max(wait, 0.0), 4.0))
    raise ProviderError("unavailable", "no attempt left")  # pragma: no cover


async def _run_tools(state: TurnState, step: StepDone, emit: Emit) -> None:
    """Dispatch every call of a step; their results go back under their call ids.

    A case handed to staff at the member's request is also told in fixed words (a
    notice), so the member sees it as handed over whatever the model writes."""
    acts = any(state.selection.offers_write(call.name) for call in step.tool_calls)
    earlier = state.waiting_taken() if acts else None
    results, rows, notice = await db_call(_tools_run, state, step, earlier)
    if rows is not None:
        state.waiting.append(rows)
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
    state: TurnState, step: StepDone, earlier: list[StepRows] | None
) -> tuple[list[ToolResult], StepRows | None, Message | None]:
    """A step's database work in one go (one hand-off to a database thread costs
    more than a query): each call through the dispatcher, then the step's rows.

    A step that may act (it proposes an offered write; ``earlier`` then holds the
    turn's waiting rows, maybe none) is stored before its calls run, after those
    rows, so that a write's log row, stored as it is
    claimed (R7, R9), points at it; its results follow at once. A step whose calls
    cannot act leaves its rows to wait (returned) for the turn's next write."""
    _hold_renewed(state)
    # The calls are dispatched as the model proposed them (the dispatcher refuses
    # what cannot be stored); the step is stored with such characters replaced.
    step_message = Message(
        conversation=state.conversation,
        role=Message.Role.STEP,
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
    if earlier is not None:  # the step may act
        _rows_store(earlier, last=step_message)
    unstored: list[ToolCallLog] = []
    results = []
    for call in step.tool_calls:
        result = _dispatch(state, call, step_message, unstored)
        if counts_for_verdict(call.name):
            state.writes.append((call.name, dict(result.payload)))
        results.append(result)
    rows = StepRows(
        step_message, _results_message(state.conversation, results), unstored
    )
    if step_message.pk is None:
        return results, rows, None
    handed_over = any(
        call.name == HANDOFF_TOOL and result.status == "ok"
        for call, result in zip(step.tool_calls, results, strict=True)
    )
    with transaction.atomic():
        _rows_store([rows])
        notice = _handed_over_notice(state) if handed_over else None
    if handed_over and state.conversation.member_id is None:
        limits.anonymous_handoff_counted(
            agent_id=state.conversation.agent_id, address=state.address
        )
    return results, None, notice


def _results_message(conversation: Conversation, results: list[ToolResult]) -> Message:
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


def _handed_over_notice(state: TurnState) -> Message:
    with override(state.conversation.language):
        text = gettext(
            "A member of the gym's staff will look at this conversation and answer "
            "you here."
        )
    return _store(state, [], Message.Role.NOTICE, text, {"reason": "handoff"})


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
    message = await db_call(
        _store,
        state,
        state.waiting_taken(),
        Message.Role.NOTICE,
        text,
        {"reason": error.kind},
        last=True,
    )
    await emit("error", {"error": "assistant_unavailable", "detail": text})
    await emit("message", message_json(message))


async def _out_of_steps(state: TurnState, prefix: str, emit: Emit) -> None:
    with override(state.conversation.language):
        text = prefix + gettext(
            "I could not finish this request. Please try again, or ask to talk to a person."
        )
    message = await db_call(
        _store,
        state,
        state.waiting_taken(),
        Message.Role.NOTICE,
        text,
        {"reason": "max_tool_steps"},
        last=True,
    )
    await emit("message", message_json(message))
