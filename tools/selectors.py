"""Reads of the harness's own records that more than one step needs."""

from __future__ import annotations

from typing import Any

from tools.models import ToolCallLog
from tools.types import PENDING_APPROVAL

#: A gated call waiting for staff, or approved and about to run or running.
WAITING = (PENDING_APPROVAL, ToolCallLog.APPROVED, ToolCallLog.EXECUTING)


def tool_calls_waiting_arguments(
    *, business_id: Any, member_id: Any, tool_name: str, other_than: str = ""
) -> list[dict[str, Any]]:
    """The arguments of the member's gated calls of a tool that wait for staff or
    are about to run, but the one whose action key is ``other_than`` (the checks
    of writes behind approval read them), oldest first."""
    if member_id is None:
        return []
    waiting = (
        ToolCallLog.objects.filter(
            business_id=business_id,
            member_id=member_id,
            tool_name=tool_name,
            gated=True,
            status__in=WAITING,
        )
        .exclude(action_key=other_than)
        .order_by("created_at")
        .values_list("arguments", flat=True)
    )
    return [arguments or {} for arguments in waiting]
