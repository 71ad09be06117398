"""The interface through which the dispatcher hands a gated call to the approvals
queue, and a write's check learns what already waits there. ``approvals``
registers its implementation at start-up, so ``tools`` never imports
``approvals``."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any, Protocol, TypeVar

from tools.models import ToolCallLog


class ApprovalQueue(Protocol):
    def __call__(
        self,
        *,
        log: ToolCallLog,
        arguments: dict[str, Any],
        valid_for: datetime.timedelta | None = None,
        max_amount: Decimal | None = None,
    ) -> str:
        """Queue the call for staff approval and return the pending action's id
        (``max_amount``: the owner's maximum, which bounds a correction too)."""
        ...


class WaitingRequests(Protocol):
    def __call__(
        self, *, business_id: Any, member_id: Any, tool_name: str, other_than: str = ""
    ) -> list[dict[str, Any]]:
        """The arguments of the member's requests of the tool that wait for staff
        (but the one whose action key is ``other_than``), oldest first."""
        ...


T = TypeVar("T")

_queue: ApprovalQueue | None = None
_waiting: WaitingRequests | None = None


def register_approval_queue(queue: ApprovalQueue, waiting: WaitingRequests) -> None:
    global _queue, _waiting
    _queue, _waiting = queue, waiting


def approval_queue() -> ApprovalQueue:
    return _registered(_queue)


def waiting_requests() -> WaitingRequests:
    return _registered(_waiting)


def _registered(part: T | None) -> T:
    if part is None:
        raise RuntimeError(
            "no approval queue is registered (is the approvals app installed?)"
        )
    return part
