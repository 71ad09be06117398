"""A conversation as its admin page shows it: a page of its messages, oldest
first, and under each tool call its verification log."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.http import QueryDict

from agents.models import Conversation, Message
from gymnasia.text import choice_labels
from tools.models import ToolCallLog
from tools.presentation import call_outcome_described, call_steps_described

#: Messages on one page of a conversation's timeline, the newest page first.
TIMELINE_PAGE_SIZE = 100


def timeline(conversation: Conversation, query: QueryDict) -> dict[str, Any]:
    """One page of the conversation as a timeline, oldest message first; under each
    tool call, its verification log. ``?at=<message id>`` opens the page holding
    that message, ``?page=N`` the N-th page counted from the newest."""
    messages = conversation.messages.order_by("-pk")
    at = query.get("at", "")
    number: Any = query.get("page")
    if at.isdigit():
        newer = messages.filter(pk__gt=int(at)).count()
        number = newer // TIMELINE_PAGE_SIZE + 1
    page = Paginator(messages, TIMELINE_PAGE_SIZE).get_page(number)
    shown = list(reversed(page.object_list))
    logs = _logs_by_call(conversation, shown)
    roles = choice_labels(Message.Role)
    count = page.paginator.count
    return {
        "entries": [
            {"message": m, "role": roles[m.role], "calls": _calls(m, logs)}
            for m in shown
        ],
        "first": count - page.end_index() + 1 if count else 0,
        "last": count - page.start_index() + 1 if count else 0,
        "count": count,
        "older_page": page.next_page_number() if page.has_next() else None,
        "newer_page": page.previous_page_number() if page.has_previous() else None,
    }


def _logs_by_call(
    conversation: Conversation, shown: list[Message]
) -> dict[tuple[str, str], list[ToolCallLog]]:
    """The log rows of the shown steps' calls, by step and call. A call can have
    several rows, oldest first: a request behind approval, a staff correction of
    it, and the approved execution are all recorded against the step and call
    that asked."""
    logs: dict[tuple[str, str], list[ToolCallLog]] = {}
    for log in (
        ToolCallLog.objects.filter(
            conversation_key=str(conversation.pk),
            message_key__in=[str(m.pk) for m in shown if m.role == Message.Role.STEP],
        )
        .order_by("created_at", "pk")
        .prefetch_related("handoffs")
    ):
        logs.setdefault((log.message_key, log.provider_call_id), []).append(log)
    return logs


def _calls(
    message: Message, logs: dict[tuple[str, str], list[ToolCallLog]]
) -> list[dict[str, Any]]:
    """A message's tool calls as the timeline shows them: each log row of a call
    with its outcome, steps and handoffs in words; a call without a row by its
    tool's name."""
    calls: list[dict[str, Any]] = []
    for call in message.content.get("tool_calls", []):
        rows = logs.get((str(message.pk), call["id"]))
        if not rows:
            calls.append({"name": str(call["name"]), "log": None})
        for log in rows or []:
            calls.append(
                {
                    "name": log.tool_name,
                    "log": log,
                    "outcome": call_outcome_described(
                        status=log.status, verification=log.verification
                    ),
                    "steps": " → ".join(call_steps_described(log.steps, times=True)),
                    "handoffs": ", ".join(str(h.pk) for h in log.handoffs.all()),
                }
            )
    return calls
