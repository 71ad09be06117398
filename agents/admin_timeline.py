"""A conversation as its admin page shows it: a page of its messages, oldest
first, and under each tool call its verification log."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.paginator import Paginator
from django.db.models import Q
from django.http import QueryDict
from django.urls import reverse
from django.utils.translation import gettext_lazy

from agents.models import Conversation, Message
from gymnasia.text import choice_labels
from gymnasia.when import when_written
from tools.models import ToolCallLog
from tools.presentation import call_outcome_described, tool_title
from tools.sentences import request_sentence

#: A decision on a call that waited, as the timeline says it.
DECIDED = {
    "approved": gettext_lazy("approved by %(who)s, %(when)s"),
    "rejected": gettext_lazy("rejected by %(who)s, %(when)s"),
    "superseded": gettext_lazy("corrected by %(who)s, %(when)s"),
    "expired": gettext_lazy("expired unanswered, %(when)s"),
}

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
    zone = conversation.business.zone
    count = page.paginator.count
    return {
        "entries": [
            {
                "message": m,
                "role": roles[m.role],
                "when": when_written(m.created_at, zone=zone, year=True),
                "calls": _calls(m, logs),
            }
            for m in shown
            # The results the model read are on each call's own page.
            if m.role != Message.Role.TOOL_RESULTS or m.text
        ],
        "first": count - page.end_index() + 1 if count else 0,
        "last": count - page.start_index() + 1 if count else 0,
        "count": count,
        "older_page": page.next_page_number() if page.has_next() else None,
        "newer_page": page.previous_page_number() if page.has_previous() else None,
    }


#: The id of the call in the step that resumes an approved request
#: (``agents.outcomes``): this prefix, then the request's call's key.
RESUMED = "approved_"


def _logs_by_call(
    conversation: Conversation, shown: list[Message]
) -> dict[tuple[str, str], list[ToolCallLog]]:
    """The log rows of the shown steps' calls, by step and call. A call can have
    several rows, oldest first: a request behind approval, a staff correction of
    it, and the approved execution are all recorded against the step and call
    that asked. The step that resumes an approved request has no row of its
    own: its call's id names the request's row (``approved_<key>``), kept under
    ``("", that id)``."""
    steps = [m for m in shown if m.role == Message.Role.STEP]
    called = [str(c["id"]) for m in steps for c in m.content.get("tool_calls", [])]
    resumed = {
        each.removeprefix(RESUMED): each
        for each in called
        if each.startswith(RESUMED) and _is_key(each.removeprefix(RESUMED))
    }
    logs: dict[tuple[str, str], list[ToolCallLog]] = {}
    for log in (
        ToolCallLog.objects.filter(conversation_key=str(conversation.pk))
        .filter(Q(message_key__in=[str(m.pk) for m in steps]) | Q(pk__in=list(resumed)))
        .order_by("created_at", "pk")
        .select_related("business", "member")
        .prefetch_related("handoffs", "events__actor")
    ):
        logs.setdefault((log.message_key, log.provider_call_id), []).append(log)
        if str(log.pk) in resumed:
            logs.setdefault(("", resumed[str(log.pk)]), []).append(log)
    return logs


def _is_key(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _decided(log: ToolCallLog) -> str:
    """Who decided a call that waited, and when, at the gym's clock; "" for a
    call that never waited or is still waiting."""
    for event in log.events.all():
        if event.kind in DECIDED:
            who = (
                event.actor.get_full_name() or event.actor.get_username()
                if (event.actor)
                else ""
            )
            return str(DECIDED[event.kind]) % {
                "who": who,
                "when": when_written(event.created_at, zone=log.business.zone),
            }
    return ""


def _calls(
    message: Message, logs: dict[tuple[str, str], list[ToolCallLog]]
) -> list[dict[str, Any]]:
    """A message's tool calls as the timeline shows them: each log row of a call
    as one line (what was asked, with names; how it ended; who decided it; the
    first call it repeats; the case it opened); a call without a row by its
    tool's title."""
    calls: list[dict[str, Any]] = []
    for call in message.content.get("tool_calls", []):
        rows = logs.get((str(message.pk), str(call["id"])[:200])) or logs.get(
            ("", str(call["id"])), []
        )
        if not rows:
            calls.append({"asked": tool_title(str(call["name"])), "log": None})
        for log in rows:
            calls.append(
                {
                    "asked": request_sentence(
                        business=log.business,
                        member=log.member,
                        tool_name=log.tool_name,
                        arguments=log.arguments or {},
                    ),
                    "log": log,
                    "url": reverse("admin:tools_toolcalllog_change", args=[log.pk]),
                    "outcome": call_outcome_described(
                        status=log.status, verification=log.verification
                    ),
                    "decided": _decided(log),
                    "first": reverse(
                        "admin:tools_toolcalllog_change", args=[log.duplicate_of_id]
                    )
                    if log.duplicate_of_id
                    else "",
                    "handoffs": [
                        reverse("admin:tools_handoff_change", args=[h.pk])
                        for h in log.handoffs.all()
                    ],
                }
            )
    return calls
