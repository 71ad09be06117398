"""How the inbox reads for staff: decisions in plain words, not the codes
recorded (tools are named by ``tools.presentation.tool_title``, what a request is
about by ``tools.naming``)."""

from __future__ import annotations

from django.utils.translation import gettext

from tools.models import Handoff, ToolCallLog
from tools.naming import request_arguments_described
from tools.presentation import tool_title

#: What a correction records as the decision's reason of the request it
#: superseded: a code, not words for staff.
CORRECTED = "corrected"


def decision_reason_described(*, status: str, reason: str) -> str:
    """A decision's reason as staff read it: the words staff wrote, or for a
    request a correction superseded (which records a code), what became of it."""
    if status == "superseded" and reason == CORRECTED:
        return gettext("corrected into a new request")
    return reason


def member_named(member: object | None) -> str:
    """A request's or case's member as staff read it: a deleted or never known
    member is an anonymous visitor."""
    return str(member) if member else gettext("anonymous visitor")


def case_named(handoff: Handoff) -> str:
    """What a case's controls name it by: its tool, or what the member asked."""
    tool = str(handoff.tried.get("tool") or "")
    return tool_title(tool) if tool else handoff.get_cause_display()


def request_described(call: ToolCallLog) -> list[tuple[str, str]]:
    """A request's arguments as staff read them, in the active language and the
    gym's time zone: each as (label, words), an id as what it names (the class's
    name and time, the diary entry's food), a date as a date."""
    return [
        (each.label, each.words)
        for each in request_arguments_described(
            business=call.business, member=call.member, arguments=call.arguments or {}
        )
    ]
