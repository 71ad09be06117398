"""Changes to pending actions."""

from __future__ import annotations

from typing import Any

from approvals.models import PendingAction
from tools.models import ToolCallLog


def pending_action_create(*, log: ToolCallLog, arguments: dict[str, Any]) -> str:
    """Queue a gated call for staff approval; the approvals queue of the dispatcher."""
    action = PendingAction.objects.create(
        business_id=log.business_id,
        member_id=log.member_id,
        conversation_key=log.conversation_key,
        tool_name=log.tool_name,
        arguments=arguments,
        action_key=log.action_key,
        tool_call=log,
    )
    return str(action.pk)
