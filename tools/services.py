"""Changes owned by the harness: staff handoffs."""

from __future__ import annotations

from typing import Any

from gymnasia.gyms.models import Business, Member
from tools.models import Handoff, ToolCallLog


def handoff_create(
    *,
    business: Business,
    member: Member | None,
    conversation_key: str,
    reason: str,
    tried: dict[str, Any] | None = None,
    known: str = "",
    tool_call: ToolCallLog | None = None,
) -> Handoff:
    """Give a case to the gym's staff, with what was tried and what is known (R9)."""
    return Handoff.objects.create(
        business=business,
        member=member,
        conversation_key=conversation_key,
        reason=reason,
        tried=tried or {},
        known=known,
        tool_call=tool_call,
    )
