"""The handler of ``list_my_requests``, which needs no integration: the member's
requests (calls that waited for staff) still waiting or decided in the last
days, each named by what it is about (``tools.naming``)."""

from __future__ import annotations

import datetime
from typing import Any

from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from tools.models import ToolCallEvent, ToolCallLog
from tools.naming import request_facts
from tools.presentation import tool_title
from tools.registry import HandlerContext, handles
from tools.sentences import request_sentence
from tools.types import NO_RESULTS, OK, PENDING_APPROVAL, UNKNOWN_OUTCOME, Outcome

#: How far back decided requests are listed.
DECIDED_WITHIN = datetime.timedelta(days=7)
#: Requests listed at most (newest first).
LISTED = 20
#: A request's state for the member, by its call's status; any other status is
#: an execution that failed.
STATES = {
    PENDING_APPROVAL: "waiting_for_staff",
    ToolCallLog.APPROVED: "approved",
    ToolCallLog.EXECUTING: "approved",
    OK: "done",
    UNKNOWN_OUTCOME: "outcome_unknown",
    ToolCallLog.REJECTED: "rejected",
    ToolCallLog.EXPIRED: "expired",
}
DECISIONS = (
    ToolCallLog.APPROVED,
    ToolCallLog.REJECTED,
    ToolCallLog.EXPIRED,
)


def _local(moment: datetime.datetime | None, ctx: HandlerContext) -> str | None:
    if moment is None:
        return None
    return timezone.localtime(moment, ctx.business.zone).isoformat(timespec="minutes")


def _request(call: ToolCallLog, ctx: HandlerContext, reason: str) -> dict[str, Any]:
    arguments = call.arguments or {}
    corrected = any(
        isinstance(s, dict) and s.get("step") == "corrected by staff"
        for s in call.steps or []
    )
    return {
        "request_id": str(call.pk),
        "tool": call.tool_name,
        "title": tool_title(call.tool_name),
        "about": request_sentence(
            business=ctx.business,
            member=ctx.member,
            tool_name=call.tool_name,
            arguments=arguments,
        ),
        "facts": request_facts(
            business=ctx.business, member=ctx.member, arguments=arguments
        ),
        "state": STATES.get(call.status, "failed"),
        "corrected_by_staff": corrected,
        "created_at": _local(call.created_at, ctx),
        "decided_at": _local(call.decided_at, ctx),  # type: ignore[attr-defined]
        "reason": reason,
    }


@handles("list_my_requests")
def list_my_requests(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    """Waiting ones whenever made; decided ones (approved, rejected, expired)
    within ``DECIDED_WITHIN``. A request staff corrected is listed as its
    correction, which stands for it."""
    decisions = ToolCallEvent.objects.filter(
        call=OuterRef("pk"), kind__in=DECISIONS
    ).order_by("-created_at")
    calls = (
        ToolCallLog.objects.filter(
            business=ctx.business,
            member=ctx.required_member,
            expires_at__isnull=False,
        )
        .exclude(status=ToolCallLog.SUPERSEDED)
        .annotate(
            decided_at=Subquery(decisions.values("created_at")[:1]),
        )
        .filter(
            Q(status=PENDING_APPROVAL)
            | Q(decided_at__gte=timezone.now() - DECIDED_WITHIN)
        )
        .order_by("-created_at")[:LISTED]
    )
    listed = list(calls)
    reasons = {
        event.call_id: str(event.parameters.get("reason") or "")
        for event in ToolCallEvent.objects.filter(
            call_id__in=[call.pk for call in listed], kind=ToolCallLog.REJECTED
        )
    }
    requests = [_request(call, ctx, reasons.get(call.pk, "")) for call in listed]
    if not requests:
        return Outcome(
            NO_RESULTS,
            {
                "message": "The member has no request waiting for staff or "
                "decided in the last 7 days."
            },
        )
    return Outcome(OK, {"requests": requests, "count": len(requests)})
