"""How the inbox reads for staff: decisions in plain words, not the codes
recorded (tools are named by ``tools.presentation.tool_title``, what a request is
about by ``tools.sentences``)."""

from __future__ import annotations

from django.utils.translation import gettext

from tools.models import Handoff, ToolCallLog
from tools.presentation import tool_title
from tools.sentences import request_sentence

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


def request_described(call: ToolCallLog) -> str:
    """A request as staff read it, in the active language and at the gym's
    clock: one sentence («Congelar la cuota del 3 al 9 de febrero de 2027»), an
    id as what it names (the class's name and hour, the diary entry's food)."""
    return request_sentence(
        business=call.business,
        member=call.member,
        tool_name=call.tool_name,
        arguments=call.arguments or {},
    )
