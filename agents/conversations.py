"""Conversations and their messages: starting, bearer tokens, storing, reading back."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Sequence
from typing import Any

from django.core import signing
from django.db import connection, transaction
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.database import rows_insert_linked
from agents.models import Agent, Conversation, Message
from agents.providers.base import AssistantStep, HistoryItem, ToolResults, UserText
from gymnasia.gyms.models import Member
from tools.calls import surely_over_after
from tools.models import ToolCallLog
from tools.registry import published_registry
from tools.types import (
    ERROR_STATUSES,
    FAILED,
    NOT_APPLIED,
    UNKNOWN_OUTCOME,
    UNVERIFIABLE,
    ToolCall,
    ToolResult,
)

TOKEN_SALT = "gymnasia.conversation.v1"  # noqa: S105 (a salt, not a secret)
TOKEN_LIFETIME = datetime.timedelta(hours=12)


class TokenRefused(Exception):
    """Missing, malformed, forged or expired bearer token (401)."""


class TokenForAnotherConversation(Exception):
    """A valid token of another conversation (403)."""


def conversation_start(
    *, agent: Agent, member: Member | None, visitor_language: str = ""
) -> Conversation:
    """A new conversation, held in the member's language when the gym has it, else
    in ``visitor_language`` (the page's, which the widget sends), else the
    agent's (R10)."""
    language = (member.language if member else "") or visitor_language or agent.language
    return Conversation.objects.create(
        agent=agent, business_id=agent.business_id, member=member, language=language
    )


def conversation_token(conversation: Conversation) -> tuple[str, datetime.datetime]:
    """A bearer token for this conversation only, and when it expires: the
    signature's time stamp is in whole seconds, so the second it is made in
    (read before it, so never later than its own)."""
    issued = timezone.now().replace(microsecond=0)
    token = signing.dumps({"c": str(conversation.pk)}, salt=TOKEN_SALT, compress=True)
    return token, issued + TOKEN_LIFETIME


def conversation_for_token(*, conversation_id: str, token: str) -> Conversation:
    """The conversation a bearer token opens; the id must be the token's own."""
    try:
        claims = signing.loads(token, salt=TOKEN_SALT, max_age=TOKEN_LIFETIME)
    except signing.SignatureExpired:
        raise TokenRefused("the token has expired") from None
    except signing.BadSignature:
        raise TokenRefused("the token is not valid") from None
    if not isinstance(claims, dict) or claims.get("c") != conversation_id:
        raise TokenForAnotherConversation("the token belongs to another conversation")
    try:
        return Conversation.objects.select_related("agent", "member", "business").get(
            pk=conversation_id
        )
    except Conversation.DoesNotExist:
        raise TokenForAnotherConversation(
            "the token belongs to another conversation"
        ) from None


def message_add(
    *,
    conversation: Conversation,
    role: str,
    text: str = "",
    content: dict[str, Any] | None = None,
) -> Message:
    """A message of the conversation, stored (``messages_insert``)."""
    message = Message(
        conversation=conversation, role=role, text=text, content=content or {}
    )
    messages_insert([message])
    return message


def messages_insert(
    messages: Sequence[Message],
    logs: Sequence[ToolCallLog] = (),
    steps: Sequence[Message] = (),
) -> None:
    """New messages of one conversation, in order, then verification-log rows,
    each pointing at its step in ``steps`` (a message stored before, or one of
    these); whole or not at all, in the caller's transaction if there is one.

    On PostgreSQL it is one statement, which takes the conversation's lock before
    the messages' keys (``rows_insert_linked``): the messages of a conversation
    are committed in the order of their keys, which ``messages_visible(after=…)``
    relies on. SQLite has one writer at a time; a lone message is one insert."""
    if connection.vendor == "postgresql":
        rows_insert_linked(
            messages,
            logs,
            "message_key",
            steps,
            serialized_by=str(messages[0].conversation_id),
        )
    elif not logs and len(messages) == 1:
        messages[0].save(force_insert=True)
    else:
        with transaction.atomic(savepoint=False):
            Message.objects.bulk_create(messages)
            for log, step in zip(logs, steps, strict=True):
                log.message_key = str(step.pk)
            ToolCallLog.objects.bulk_create(logs)


def messages_visible(
    *, conversation: Conversation, after: int | None = None
) -> QuerySet[Message]:
    """The messages a member sees, oldest first, after a given message when asked."""
    qs = Message.objects.filter(conversation=conversation, role__in=Message.VISIBLE)
    if after is not None:
        qs = qs.filter(pk__gt=after)
    return qs.order_by("pk")


def messages_page(
    *,
    conversation: Conversation,
    after: int | None = None,
    before: int | None = None,
    limit: int,
) -> tuple[list[Message], bool]:
    """At most ``limit`` messages a member sees, oldest first, and whether more
    lie beyond them: with ``after``, those created after it (more: later ones);
    with ``before``, the page just before it, and with neither the newest page
    (more: earlier ones). One query."""
    if after is not None:
        rows = list(
            messages_visible(conversation=conversation, after=after)[: limit + 1]
        )
        return rows[:limit], len(rows) > limit
    qs = messages_visible(conversation=conversation)
    if before is not None:
        qs = qs.filter(pk__lt=before)
    rows = list(qs.order_by("-pk")[: limit + 1])
    return rows[:limit][::-1], len(rows) > limit


def message_json(message: Message) -> dict[str, Any]:
    return {
        "id": str(message.public_id),
        "role": message.role,
        "text": message.text,
        "created_at": message.created_at.isoformat(),
    }


def _call(data: dict[str, Any]) -> ToolCall:
    return ToolCall(id=data["id"], name=data["name"], arguments=data["arguments"])


def _result(data: dict[str, Any]) -> ToolResult:
    return ToolResult(
        call_id=data["call_id"],
        status=data["status"],
        payload=data["payload"],
        is_error=data["is_error"],
    )


def conversation_history(conversation: Conversation) -> tuple[HistoryItem, ...]:
    """The conversation in the neutral shape every provider adapter reads: its
    last turns, from the member's message that opens the first of them (the
    agent's ``history_turns``). A conversation grows all day, and the whole of it
    would cost the gym more with every message, then outgrow what the model can
    read, and no message could be answered any more.

    Every step's calls are answered, each under its call id. A turn stopped between
    a step and its results (its process ended while a write ran) left calls with no
    result, and the providers refuse a history with an unanswered call: the
    conversation could never go on. Such calls are answered from the verification
    log (``interrupted_results``).
    """
    turns = conversation.agent.history_turns
    first = (
        Message.objects.filter(conversation=conversation, role=Message.Role.MEMBER)
        .order_by("-pk")
        .values("pk")[turns - 1 : turns]
    )
    messages = list(
        Message.objects.filter(
            conversation=conversation, pk__gte=Coalesce(Subquery(first), 0)
        ).order_by("pk")
    )
    items: list[HistoryItem] = []
    for index, message in enumerate(messages):
        if message.role == Message.Role.MEMBER:
            items.append(UserText(message.text))
        elif message.role == Message.Role.ASSISTANT:
            items.append(
                AssistantStep(text=message.content.get("model_text", message.text))
            )
        elif message.role == Message.Role.STEP:
            calls = tuple(_call(c) for c in message.content.get("tool_calls", []))
            following = messages[index + 1] if index + 1 < len(messages) else None
            stored = _stored_results(calls, following)
            answered = {result.call_id for result in stored}
            unanswered = [call for call in calls if call.id not in answered]
            if unanswered:
                stored += interrupted_results(step=message, calls=unanswered)
            items.append(
                AssistantStep(
                    text=message.text,
                    tool_calls=calls,
                    provider_state=message.content.get("provider_state", {}),
                )
            )
            items.append(ToolResults(tuple(stored)))
        # Results are read with their step, just above.
    return tuple(items)


def _stored_results(
    calls: tuple[ToolCall, ...], following: Message | None
) -> list[ToolResult]:
    """The stored results of a step's calls: the results row right after the step,
    only those of its own calls (a turn running at the same time in the same
    conversation may have stored its rows in between)."""
    if following is None or following.role != Message.Role.TOOL_RESULTS:
        return []
    ids = {call.id for call in calls}
    return [
        _result(r) for r in following.content.get("results", []) if r["call_id"] in ids
    ]


def interrupted_results(*, step: Message, calls: list[ToolCall]) -> list[ToolResult]:
    """Results for calls of a step whose results were never stored: what the
    verification log recorded when the call finished; else nothing was done when no
    write was ever claimed (a write is recorded before it runs); else nobody knows
    (R9: the sweep hands such a call to staff)."""
    logs = {
        log.provider_call_id: log
        for log in ToolCallLog.objects.filter(
            conversation_key=str(step.conversation_id), message_key=str(step.pk)
        )
    }
    registry = published_registry()
    results = []
    for call in calls:
        log = logs.get(call.id[:200])
        tool = registry.get(call.name)
        payload: dict[str, Any]
        if log is not None and log.status not in ("", ToolCallLog.EXECUTING):
            payload = dict(log.result) or {"status": log.status}
        elif log is not None and log.created_at > timezone.now() - surely_over_after():
            # Another turn of the conversation may be running it right now.
            payload = {
                "status": UNKNOWN_OUTCOME,
                "verification": UNVERIFIABLE,
                "message": "This change is still being made, or its turn has just "
                "stopped; whether it was saved is not known yet.",
            }
        elif log is not None:
            payload = {
                "status": UNKNOWN_OUTCOME,
                "verification": UNVERIFIABLE,
                "message": "The turn stopped while this call ran; it is not known "
                "whether the change was saved. The gym's staff will check it.",
            }
        else:
            payload = {
                "status": FAILED,
                "message": "The turn stopped before this call's result was kept; "
                "nothing was changed.",
            }
            if tool is not None and tool.is_write:
                payload["verification"] = NOT_APPLIED
        status = str(payload.get("status", FAILED))
        results.append(
            ToolResult(
                call_id=call.id,
                status=status,
                payload=payload,
                is_error=status in ERROR_STATUSES,
            )
        )
    return results


#: Beyond any message's key (a 64-bit key's largest value).
LAST_KEY = 2**63 - 1


def conversation_excerpts(
    *, requests: list[tuple[str, str]], size: int = 3
) -> dict[tuple[str, str], list[Message]]:
    """For staff deciding requests: for each (conversation, step message id) of a
    request, the visible messages of the turn that made it, from the member's
    message that asked on (at most ``size``); without a step, the conversation's
    last ones. Two queries however many requests, reading only those turns
    however long their conversations: the bounds of each step's turn, then the
    messages within them."""
    visible: dict[str, list[Message]] = {}
    wanted = Q(_excerpts_wanted(requests, size), role__in=Message.VISIBLE)
    rows = Message.objects.filter(wanted).select_related("conversation").order_by("pk")
    for message in rows.only("conversation__channel", "role", "text", "created_at"):
        visible.setdefault(str(message.conversation_id), []).append(message)
    excerpts = {}
    for conversation_key, step_key in requests:
        messages = visible.get(conversation_key, [])
        if step_key.isdigit():
            excerpt = _turn_of_step(messages, int(step_key))[:size]
        else:
            excerpt = messages[-size:]
        excerpts[conversation_key, step_key] = excerpt
    return excerpts


def _excerpts_wanted(requests: list[tuple[str, str]], size: int) -> Q:
    """The messages the excerpts of ``requests`` are taken from: each step's
    turn, from the member's message before it to the next one; a request
    without a step, its conversation's last ``size`` visible messages. A step
    of another conversation than its request's adds none."""
    wanted = Q(pk__in=[])
    steps: dict[int, uuid.UUID] = {}
    for conversation_key, step_key in requests:
        try:
            conversation = uuid.UUID(conversation_key)
        except ValueError:
            continue
        if step_key.isdigit():
            steps[int(step_key)] = conversation
            continue
        last = (
            Message.objects.filter(
                conversation_id=conversation, role__in=Message.VISIBLE
            )
            .order_by("-pk")
            .values("pk")[size - 1 : size]
        )
        wanted |= Q(conversation_id=conversation, pk__gte=Coalesce(last, 0))
    if not steps:
        return wanted
    asks = Message.objects.filter(
        conversation=OuterRef("conversation"), role=Message.Role.MEMBER
    )
    bounds = (
        Message.objects.filter(pk__in=steps)
        .annotate(
            asked=asks.filter(pk__lt=OuterRef("pk")).order_by("-pk").values("pk")[:1],
            next_ask=asks.filter(pk__gt=OuterRef("pk")).order_by("pk").values("pk")[:1],
        )
        .values_list("pk", "conversation_id", "asked", "next_ask")
    )
    for step_id, conversation, asked, next_ask in bounds:
        if conversation == steps[step_id]:
            wanted |= Q(
                conversation_id=conversation,
                pk__gte=asked or 0,
                pk__lte=next_ask or LAST_KEY,
            )
    return wanted


def _turn_of_step(messages: list[Message], step: int) -> list[Message]:
    """Of a conversation's visible ``messages``, oldest first, those of the turn
    that made ``step``: the member's message that asked, then what followed up
    to the turn's reply."""
    start = max(
        (
            i
            for i, m in enumerate(messages)
            if m.role == Message.Role.MEMBER and m.pk < step
        ),
        default=0,
    )
    turn = messages[start : start + 1]
    for message in messages[start + 1 :]:
        if message.role == Message.Role.MEMBER:
            break
        turn.append(message)
        if message.role == Message.Role.ASSISTANT and message.pk > step:
            # The turn's reply ends it: notices posted after it (what staff
            # decided, on this or another request) are not what was asked.
            break
    return turn
