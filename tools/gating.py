"""The interface through which the dispatcher hands a gated call to the approvals
queue. ``approvals`` registers its implementation at start-up, so ``tools`` never
imports ``approvals``."""

from __future__ import annotations

import datetime
from typing import Any, Protocol

from tools.models import ToolCallLog


class ApprovalQueue(Protocol):
    def __call__(
        self,
        *,
        log: ToolCallLog,
        arguments: dict[str, Any],
        valid_for: datetime.timedelta | None = None,
    ) -> str:
        """Queue the call for staff approval and return the pending action's id."""
        ...


_queue: ApprovalQueue | None = None


def register_approval_queue(queue: ApprovalQueue) -> None:
    global _queue
    _queue = queue


def approval_queue() -> ApprovalQueue:
    if _queue is None:
        raise RuntimeError(
            "no approval queue is registered (is the approvals app installed?)"
        )
    return _queue
