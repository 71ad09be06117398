"""The interface through which the dispatcher hands a gated call to the approvals
queue. ``approvals`` registers its implementation at start-up, so ``tools`` never
imports ``approvals``. (What waits is read from the calls themselves:
``tools.selectors``.)"""

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


T = TypeVar("T")

_queue: ApprovalQueue | None = None


def register_approval_queue(queue: ApprovalQueue) -> None:
    global _queue
    _queue = queue


def approval_queue() -> ApprovalQueue:
    return _registered(_queue)


def _registered(part: T | None) -> T:
    if part is None:
        raise RuntimeError(
            "no approval queue is registered (is the approvals app installed?)"
        )
    return part
