"""Conversations and their messages: starting, bearer tokens, storing, reading back."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from django.core import signing
from django.db.models import QuerySet
from django.utils import timezone

from agents.models import Agent, Conversation, Message
from agents.providers.base import AssistantStep, HistoryItem, ToolResults, UserText
from gymnasia.gyms.models import Member
from tools.types import ToolCall, ToolResult

TOKEN_SALT = "gymnasia.conversation.v1"  # noqa: S105 (a salt, not a secret)
TOKEN_LIFETIME = datetime.timedelta(hours=12)


class TokenRefused(Exception):
    """Missing, malformed, forged or expired bearer token (401)."""


class TokenForAnotherConversation(Exception):
    """A valid token of another conversation (403)."""


def conversation_start(*, agent: Agent, member: Member | None) -> Conversation:
    language = (member.language if member else "") or agent.language
    return Conversation.objects.create(
        agent=agent, business_id=agent.business_id, member=member, language=language
    )


def conversation_token(conversation: Conversation) -> tuple[str, datetime.datetime]:
    """A bearer token for this conversation only, and when it expires."""
    token = signing.dumps({"c": str(conversation.pk)}, salt=TOKEN_SALT, compress=True)
    return token, timezone.now() + TOKEN_LIFETIME


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
    return Message.objects.create(
        conversation=conversation, role=role, text=text, content=content or {}
    )


def messages_visible(
    *, conversation: Conversation, after: int | None = None
) -> QuerySet[Message]:
    """The messages a member sees, oldest first, after a given message when asked."""
    qs = Message.objects.filter(conversation=conversation, role__in=Message.VISIBLE)
    if after is not None:
        qs = qs.filter(pk__gt=after)
    return qs.order_by("pk")


def message_json(message: Message) -> dict[str, Any]:
    return {
        "id": str(message.pk),
        "role": message.role,
        "text": message.text,
        "created_at": message.created_at.isoformat(),
    }


def _call(data: dict[str, Any]) -> ToolCall:
    return ToolCall(id=data["id"], name=data["name"], arguments=data["arguments"])


def conversation_history(conversation: Conversation) -> tuple[HistoryItem, ...]:
    """The conversation in the neutral shape every provider adapter reads."""
    items: list[HistoryItem] = []
    for message in Message.objects.filter(conversation=conversation).order_by("pk"):
        if message.role == Message.Role.MEMBER:
            items.append(UserText(message.text))
        elif message.role == Message.Role.ASSISTANT:
            items.append(
                AssistantStep(text=message.content.get("model_text", message.text))
            )
        elif message.role == Message.Role.STEP:
            items.append(
                AssistantStep(
                    text=message.text,
                    tool_calls=tuple(
                        _call(c) for c in message.content.get("tool_calls", [])
                    ),
                    provider_state=message.content.get("provider_state", {}),
                )
            )
        elif message.role == Message.Role.TOOL_RESULTS:
            items.append(
                ToolResults(
                    tuple(
                        ToolResult(
                            call_id=r["call_id"],
                            status=r["status"],
                            payload=r["payload"],
                            is_error=r["is_error"],
                        )
                        for r in message.content.get("results", [])
                    )
                )
            )
    return tuple(items)


def conversation_excerpts(
    *, conversation_keys: list[str], size: int = 3
) -> dict[str, list[Message]]:
    """The last visible messages of each conversation, for staff deciding a request
    (one query however many conversations)."""
    ids = []
    for key in conversation_keys:
        try:
            ids.append(uuid.UUID(key))
        except ValueError:
            continue
    excerpts: dict[str, list[Message]] = {}
    rows = Message.objects.filter(
        conversation_id__in=ids, role__in=Message.VISIBLE
    ).order_by("conversation_id", "-pk")
    for message in rows.only("conversation_id", "role", "text", "created_at"):
        lines = excerpts.setdefault(str(message.conversation_id), [])
        if len(lines) < size:
            lines.insert(0, message)
    return excerpts
