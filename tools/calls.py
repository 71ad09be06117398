"""A tool call's life: every change of its state.

A call is one durable run (DESIGN.md, "A tool call's life, and an approval"). Its
row (``ToolCallLog``) carries its state, and every change below is a
compare-and-set on that row, with an event (``ToolCallEvent``: who, when, why)
for each change after the call was proposed::

    proposed ─► claimed (executing, a lease) ─► its result (ok, failed, …) (record)
             ─► refused | invalid | duplicate, or a read's result       (record)
    claimed ─► pending_approval (record) ─► approved ─► executing ─► its result
                                         ─► rejected | expired | superseded
    executing ─► unknown_outcome, handed to staff, once its lease has passed (R9)

The dispatcher decides which (``tools.dispatcher``: R2, R4, R7, the owner's
mode); ``tools.execution`` runs a claimed call and records what it found. What the
call was proposed with (business, member, conversation, tool, arguments, the
expiry and the owner's limit of a request) is read from its row by every later
step; nothing is rebuilt or made up. ``approvals`` decides requests with these
services and reads these models.
"""

from __future__ import annotations

import datetime
import time
import uuid
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from tools.canonical import action_key
from tools.models import ActionLock, Handoff, ToolCallEvent, ToolCallLog
from tools.services import handoff_create, unknown_outcome_result
from tools.types import (
    DUPLICATE,
    NOT_APPLIED,
    OK,
    PENDING_APPROVAL,
    UNKNOWN_OUTCOME,
    UNVERIFIABLE,
)

#: Attempts of one call at most (R6: a write is tried again only when it
#: provably never arrived).
MAX_ATTEMPTS = 3
#: How long the same action in a conversation counts as already done (R7).
DUPLICATE_WINDOW = datetime.timedelta(minutes=10)
#: Earlier calls that block a repeat: something may have happened, or may still
#: (R7). A request staff rejected, or that expired or was corrected, does not.
BLOCKING_STATUSES = (
    OK,
    PENDING_APPROVAL,
    ToolCallLog.APPROVED,
    UNKNOWN_OUTCOME,
    ToolCallLog.EXECUTING,
)


def surely_over_after() -> datetime.timedelta:
    """How long after a call was claimed nothing of it can still be running: each
    attempt stops at the execution timeout, with a margin past the last one."""
    return datetime.timedelta(
        seconds=MAX_ATTEMPTS * settings.TOOLS_EXECUTION_TIMEOUT + 60
    )


#: What staff decide of a call that waits for them; ``expired`` is the sweep's.
DECISIONS = (
    ToolCallLog.APPROVED,
    ToolCallLog.REJECTED,
    ToolCallLog.EXPIRED,
    ToolCallLog.SUPERSEDED,
)


def tool_call_event(
    call_id: Any, kind: str, actor: Any = None, **parameters: Any
) -> None:
    """Append one event to a call's trail."""
    ToolCallEvent.objects.create(
        call_id=call_id, kind=kind, actor=actor, parameters=parameters
    )


def tool_call_claim(log: ToolCallLog, again_for: str = "") -> ToolCallLog | None:
    """Record this write as executing, unless an earlier call of the same action
    blocks it; then return that earlier call (waiting while it is still running).
    A call with ``again`` (``again_for``: the member's message) is a new action
    even so, once per message (R7)."""
    wait_until = time.monotonic() + settings.TOOLS_EXECUTION_TIMEOUT + 5
    while True:
        with transaction.atomic():
            ActionLock.objects.bulk_create(
                [ActionLock(key=log.action_key, touched_at=timezone.now())],
                update_conflicts=True,
                unique_fields=["key"],
                update_fields=["touched_at"],
            )
            first = (
                ToolCallLog.objects.filter(
                    action_key=log.action_key,
                    created_at__gte=timezone.now() - DUPLICATE_WINDOW,
                )
                .filter(Q(status__in=BLOCKING_STATUSES) | Q(verification=UNVERIFIABLE))
                # A duplicate did nothing, whatever its first's verification says.
                .exclude(status=DUPLICATE)
                .order_by("created_at")
                .first()
            )
            if first is not None and again_for:
                honoured = ToolCallLog.objects.filter(
                    action_key=log.action_key, again_for=again_for
                ).exists()
                if not honoured:
                    log.again_for, first = again_for, None
            if first is None:
                log.status = ToolCallLog.EXECUTING
                log.lease_until = timezone.now() + execution_lease()
                log.save(force_insert=True)
                return None
        if first.status != ToolCallLog.EXECUTING or time.monotonic() > wait_until:
            return first
        time.sleep(0.05)


FINAL_FIELDS = [
    "status",
    "verification",
    "result",
    "steps",
    "finished_at",
    "duration_ms",
    "attempts",
    "gated",
    "expires_at",
    "max_amount",
]


def tool_call_record(
    log: ToolCallLog, unstored: list[ToolCallLog] | None = None
) -> bool:
    """Write the call's row of the verification log (one statement): an update of
    a row stored as it was claimed, while it is still executing (False when it
    is not any more), else its insert, unless the caller keeps unstored rows to
    write them itself (``unstored``: the turn writes them with its step)."""
    if not log._state.adding:
        fields = {name: getattr(log, name) for name in FINAL_FIELDS}
        running = ToolCallLog.objects.filter(pk=log.pk, status=ToolCallLog.EXECUTING)
        return bool(running.update(**fields))
    if unstored is not None:
        unstored.append(log)
    else:
        log.save(force_insert=True)
    return True


def tool_call_late(*, log: ToolCallLog, found: dict[str, Any]) -> None:
    """An execution that ended after its lease: ``log`` becomes the row as
    recorded, and what the execution found joins the call's trail."""
    log.refresh_from_db()
    tool_call_event(log.pk, "late_result", result=found)


def tool_call_decide(
    *,
    call_id: Any,
    to: str,
    actor: Any = None,
    reason: str = "",
    now: datetime.datetime | None = None,
) -> bool:
    """Move a call waiting for approval to staff's decision while its time is not
    up, or to expired once it is; once: False when it no longer waits (or staff
    came too late). Run it in the caller's transaction, which records the
    decision beside it."""
    if to not in DECISIONS:
        raise ValueError(f"{to} is not a decision")
    now = now or timezone.now()
    in_time = (
        Q(expires_at__lte=now) if to == ToolCallLog.EXPIRED else Q(expires_at__gt=now)
    )
    with transaction.atomic():
        changed = (
            ToolCallLog.objects.filter(pk=call_id, status=PENDING_APPROVAL)
            .filter(in_time)
            .update(status=to)
        )
        if changed:
            details = {"reason": reason} if reason else {}
            tool_call_event(call_id, to, actor=actor, **details)
    return bool(changed)


def tool_call_correct(
    *,
    call: ToolCallLog,
    arguments: dict[str, Any],
    actor: Any,
    difference: dict[str, Any],
) -> ToolCallLog | None:
    """Supersede a waiting call by a new one with staff's (checked) arguments,
    proposed as it was in everything else (it expires when the original would
    have); None when the original no longer waits."""
    from tools.dispatcher import request_named  # it claims calls with this module

    with transaction.atomic():
        if not tool_call_decide(
            call_id=call.pk, to=ToolCallLog.SUPERSEDED, actor=actor
        ):
            return None
        new_id = uuid.uuid4()  # the new request's id is in its own result
        new = ToolCallLog.objects.create(
            id=new_id,
            business_id=call.business_id,
            member_id=call.member_id,
            conversation_key=call.conversation_key,
            message_key=call.message_key,
            provider_call_id=call.provider_call_id,
            tool_name=call.tool_name,
            effect=call.effect,
            arguments=arguments,
            action_key=action_key(
                business_id=call.business_id,
                conversation_key=call.conversation_key,
                tool_name=call.tool_name,
                arguments=arguments,
            ),
            offered=True,
            valid=True,
            gated=True,
            expires_at=call.expires_at,
            max_amount=call.max_amount,
            status=PENDING_APPROVAL,
            verification=NOT_APPLIED,
            result={
                **call.result,
                "status": PENDING_APPROVAL,
                "pending_action": str(new_id),
                **request_named(call.business, call.member, call.tool_name, arguments),
            },
            steps=[{"step": "corrected by staff", "difference": difference}],
        )
        tool_call_event(call.pk, "corrected", actor=actor, by=str(new.pk))
        tool_call_event(new.pk, "proposed", actor=actor, corrects=str(call.pk))
    return new


def tool_call_start_approved(*, call_id: Any) -> bool:
    """An approved call claimed to run (approved → executing, under a lease);
    False when it is not approved any more: running or done by another
    delivery, which is left as it is."""
    now = timezone.now()
    with transaction.atomic():
        claimed = ToolCallLog.objects.filter(
            pk=call_id, status=ToolCallLog.APPROVED
        ).update(status=ToolCallLog.EXECUTING, lease_until=now + execution_lease())
        if claimed:
            tool_call_event(call_id, ToolCallLog.EXECUTING)
    return bool(claimed)


def execution_lease() -> datetime.timedelta:
    """How long an execution may hold its call before its worker is taken to be
    gone: every attempt's timeout, with a margin."""
    return surely_over_after()


def tool_calls_abandoned_hand_over(*, now: datetime.datetime) -> list[ToolCallLog]:
    """Calls whose execution's lease passed with no outcome: their worker or turn
    is gone, and nobody knows whether the change was made. Each becomes an
    unknown outcome with exactly one handoff (R9), never run again."""
    stale = (
        ToolCallLog.objects.filter(status=ToolCallLog.EXECUTING)
        .filter(
            Q(lease_until__lt=now)
            | Q(lease_until__isnull=True, created_at__lte=now - surely_over_after())
        )
        .select_related("business", "member")
    )
    handed_over = []
    for call in stale:
        cause = (
            Handoff.Cause.WORKER_STOPPED if call.gated else Handoff.Cause.TURN_STOPPED
        )
        with transaction.atomic():
            handoff = handoff_create(
                business=call.business,
                member=call.member,
                conversation_key=call.conversation_key,
                cause=cause,
                tried={"tool": call.tool_name, "arguments": call.arguments},
                tool_call=call,
            )
            result = unknown_outcome_result(handoff)
            changed = ToolCallLog.objects.filter(
                pk=call.pk, status=ToolCallLog.EXECUTING
            ).update(
                status=UNKNOWN_OUTCOME,
                verification=UNVERIFIABLE,
                result=result,
                steps=[
                    *call.steps,
                    {"step": "handoff", "handoff": str(handoff.pk), "by": "sweep"},
                ],
                finished_at=now,
            )
            if not changed:  # it finished meanwhile
                transaction.set_rollback(True)
                continue
            tool_call_event(
                call.pk, UNKNOWN_OUTCOME, reason="lease_passed", handoff=str(handoff.pk)
            )
        call.status, call.result = UNKNOWN_OUTCOME, result
        handed_over.append(call)
    return handed_over
