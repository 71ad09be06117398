"""Events staff and the gym's own tools hear of, each recorded once.

``tools`` records a request or a case as a state of its rows and knows nobody
above it; ``events_announce`` (run by beat every second) looks for what is new
and records each as an ``Event``; decisions and resolved cases are recorded by
the services that make them. The unique constraints make the first to record an
event the one who tells, so two sweeps or a redelivered task tell nobody twice,
and a broker that was down when the request was made loses nothing. Recording an
event writes, in the same transaction, a delivery for each webhook endpoint and,
for a new request or case, a notice for each person whose preferences ask for it
(mailed by ``approvals.notices``).

The periodic sweep reminds of requests still waiting after the gym's reminder
time and tells the owners of those waiting past its escalation time (always
before the request expires): each once per person.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from functools import partial
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet

from approvals.models import Decision, Event, StaffNotice
from approvals.webhooks import webhook_deliveries_create
from gymnasia.gyms.models import Business, StaffRole
from tools.models import Handoff, ToolCallLog
from tools.types import PENDING_APPROVAL

#: A sender that took notices and stopped before sending them leaves them to be
#: taken again after this long.
CLAIM_LEASE = datetime.timedelta(minutes=5)

Kind = StaffNotice.Kind
#: Which preference asks for each kind of notice.
WANTS = {
    Kind.REQUEST: "notify_requests",
    Kind.HANDOFF: "notify_handoffs",
    Kind.REMINDER: "notify_reminders",
    Kind.ESCALATION: "notify_reminders",
}


def _iso(moment: datetime.datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def request_data(call: ToolCallLog) -> dict[str, Any]:
    """A request as the gym's own tools read it (``approval.requested``)."""
    member = call.member
    return {
        "request": str(call.pk),
        "tool": call.tool_name,
        "arguments": dict(call.arguments or {}),
        "member": member.external_id if member else None,
        "member_name": member.name if member else "",
        "conversation": call.conversation_key,
        "created_at": _iso(call.created_at),
        "expires_at": _iso(call.expires_at),
    }


def handoff_data(handoff: Handoff) -> dict[str, Any]:
    """A case as the gym's own tools read it (``handoff.opened``/``resolved``)."""
    member = handoff.member
    return {
        "handoff": str(handoff.pk),
        "cause": handoff.cause,
        "reason": handoff.reason,
        "tool": str(handoff.tried.get("tool") or "") or None,
        "request": str(handoff.tool_call_id) if handoff.tool_call_id else None,
        "member": member.external_id if member else None,
        "member_name": member.name if member else "",
        "conversation": handoff.conversation_key,
        "status": handoff.status,
        "resolution": handoff.resolution or None,
        "note": handoff.note,
        "created_at": _iso(handoff.created_at),
        "resolved_at": _iso(handoff.resolved_at),
    }


def _recipients(business_id: int, kind: str) -> QuerySet[StaffRole]:
    """The people of a gym who want to hear of ``kind`` by e-mail (owners only,
    for an overdue request)."""
    roles = StaffRole.objects.filter(
        business_id=business_id,
        email_notifications=True,
        user__is_active=True,
        **{WANTS[Kind(kind)]: True},
    ).exclude(user__email="")
    if kind == Kind.ESCALATION:
        roles = roles.filter(role=StaffRole.Role.OWNER)
    return roles


def _notices_create(
    business_id: int, kind: str, *, call: Any = None, handoff: Any = None
) -> set[int]:
    """A notice of ``kind`` for each person who wants one and has none yet; the
    people whose notice this made (to be mailed after the commit). A sweep
    beside this one that made a person's first finds it made here."""
    subject = {"call": call} if call is not None else {"handoff": handoff}
    made = set()
    for role in _recipients(business_id, kind).values_list("pk", flat=True):
        _, created = StaffNotice.objects.get_or_create(
            role_id=role, kind=kind, **subject, defaults={"business_id": business_id}
        )
        if created:
            made.add(role)
    return made


def event_record(
    *,
    business_id: int,
    type: str,
    data: dict[str, Any],
    call: ToolCallLog | None = None,
    handoff: Handoff | None = None,
) -> Event | None:
    """Record an event once (``None`` when it already was) with its webhook
    deliveries, and for a new request or case the notices of the people who
    want them, mailed after the commit. Runs in the caller's transaction."""
    try:
        with transaction.atomic():
            event = Event.objects.create(
                business_id=business_id,
                type=type,
                call=call,
                handoff=handoff,
                data=data,
            )
    except IntegrityError:
        return None
    webhook_deliveries_create(event=event)
    roles: set[int] = set()
    if type == Event.Type.APPROVAL_REQUESTED:
        roles = _notices_create(business_id, Kind.REQUEST, call=call)
    elif type == Event.Type.HANDOFF_OPENED:
        roles = _notices_create(business_id, Kind.HANDOFF, handoff=handoff)
    _mail_after_commit(roles)
    return event


def _mail_after_commit(roles: Iterable[int]) -> None:
    from approvals.tasks import mail_staff

    for role in roles:
        transaction.on_commit(partial(mail_staff.delay, role), robust=True)


def events_announce() -> int:
    """Record the requests made and the cases opened that are not yet recorded;
    how many. Run every second by beat: one query each when nothing is new."""
    requested = Event.objects.filter(
        type=Event.Type.APPROVAL_REQUESTED, call=OuterRef("pk")
    )
    opened = Event.objects.filter(
        type=Event.Type.HANDOFF_OPENED, handoff=OuterRef("pk")
    )
    calls = ToolCallLog.objects.filter(
        status=PENDING_APPROVAL, expires_at__isnull=False
    ).filter(~Exists(requested))
    handoffs = Handoff.objects.filter(status=Handoff.Status.OPEN).filter(
        ~Exists(opened)
    )
    news: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        (Event.Type.APPROVAL_REQUESTED, request_data(call), {"call": call})
        for call in calls.select_related("member")
    ] + [
        (Event.Type.HANDOFF_OPENED, handoff_data(handoff), {"handoff": handoff})
        for handoff in handoffs.select_related("member")
    ]
    recorded = 0
    for type, data, subject in news:
        business_id = next(iter(subject.values())).business_id
        with transaction.atomic():
            recorded += bool(
                event_record(business_id=business_id, type=type, data=data, **subject)
            )
    return recorded


def escalation_due(call: ToolCallLog, business: Business) -> datetime.datetime:
    """When the owners hear of a request still waiting: after the gym's
    escalation time, or with a quarter of its time left if that comes first."""
    late = call.created_at + datetime.timedelta(minutes=business.escalation_minutes)
    if call.expires_at is None:
        return late
    return min(late, call.expires_at - (call.expires_at - call.created_at) / 4)


def notices_remind(*, now: datetime.datetime) -> dict[str, int]:
    """Reminders of the requests still waiting after the gym's reminder time, and
    the owners told of those past the escalation time: each once per person."""
    waiting = ToolCallLog.objects.filter(
        status=PENDING_APPROVAL, expires_at__gt=now
    ).select_related("business")
    counts = {"reminded": 0, "escalated": 0}
    for call in waiting:
        business = call.business
        due = {
            Kind.REMINDER: call.created_at
            + datetime.timedelta(minutes=business.reminder_minutes),
            Kind.ESCALATION: escalation_due(call, business),
        }
        for kind, when in due.items():
            if when > now:
                continue
            done = StaffNotice.objects.filter(call=call, kind=kind).values("role_id")
            wanted = _recipients(call.business_id, kind).exclude(pk__in=done)
            if not wanted.exists():
                continue
            with transaction.atomic():
                roles = _notices_create(call.business_id, kind, call=call)
                _mail_after_commit(roles)
            if roles:
                counts["reminded" if kind == Kind.REMINDER else "escalated"] += 1
    return counts


def decision_data(call: ToolCallLog, decision: Decision) -> dict[str, Any]:
    """A decision as the gym's own tools read it (``approval.decided``)."""
    user = decision.decided_by
    return {
        "request": str(call.pk),
        "tool": call.tool_name,
        "decision": decision.kind,
        "decided_by": user.get_username() if user else None,
        "decided_at": _iso(decision.decided_at),
        "reason": decision.reason if decision.kind != Decision.Kind.SUPERSEDED else "",
        "corrected_to": str(decision.corrected_to_id)
        if decision.corrected_to_id
        else None,
        "changes": decision.difference,
    }


def decision_record(decision: Decision) -> None:
    """Record a decision as staff made it (with the call's change of state, in
    the same transaction): ``approval.decided``, once."""
    call = decision.call
    event_record(
        business_id=call.business_id,
        type=Event.Type.APPROVAL_DECIDED,
        data=decision_data(call, decision),
        call=call,
    )


def notices_due(*, now: datetime.datetime) -> int:
    """Mail the people with notices left waiting (quiet hours over, a message
    lost, a sender that stopped): the sweep's safety net."""
    from approvals.tasks import mail_staff

    roles = set(
        StaffNotice.objects.filter(status=StaffNotice.Status.UNSENT)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lte=now - CLAIM_LEASE))
        .values_list("role_id", flat=True)
    )
    for role in roles:
        mail_staff.delay(role)
    return len(roles)
