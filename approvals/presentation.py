"""How the inbox reads for staff: decisions in plain words, not the codes
recorded (tools are named by ``tools.presentation.tool_title``)."""

from __future__ import annotations

from django.utils.translation import gettext

#: What a correction records as the decision's reason of the request it
#: superseded: a code, not words for staff.
CORRECTED = "corrected"


def decision_reason_described(*, status: str, reason: str) -> str:
    """A decision's reason as staff read it: the words staff wrote, or for a
    request a correction superseded (which records a code), what became of it."""
    if status == "superseded" and reason == CORRECTED:
        return gettext("corrected into a new request")
    return reason
