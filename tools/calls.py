"""A tool call's life after it was proposed: every change of its state.

A call is one durable run (DESIGN.md, "A tool call's life, and an approval"). Its
row (``ToolCallLog``) carries its state, and every change below is a
compare-and-set on that row, with an event (``ToolCallEvent``: who, when, why)::

    pending_approval ─► approved ─► executing ─► its result (ok, failed, …)
                     ─► rejected | expired | superseded (by a staff correction)
    executing ─► unknown_outcome, handed to staff, once its lease has passed (R9)

What the call was proposed with (business, member, conversation, tool, arguments)
is read from its row by every later step; nothing is rebuilt or made up. An
approved call resumes through the dispatcher's own remaining steps
(``tools.execution.execute_and_verify``: execute, verify, hand off), on its own
row, so its result there is the action's result as it stands now (R7).

``approvals`` decides; it calls these services and reads these models only.
"""

from __future__ import annotations

import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from gymnasia.errors import InvalidValue, NotFound
from tools.canonical import action_key, canonical_arguments
from tools.dispatcher import amount_of, over_the_limit, parse_arguments
from tools.execution import (
    CallContext,
    Trace,
    execute_and_verify,
    finish_call,
    surely_over_after,
    write_checked,
)
from tools.integrations.errors import IntegrationError
from tools.models import Handoff, ToolCallEvent, ToolCallLog
from tools.registry import published_registry
from tools.selection import ToolPolicy
from tools.services import handoff_create, unknown_outcome_result
from tools.types import (
    FAILED,
    NOT_APPLIED,
    PENDING_APPROVAL,
    UNKNOWN_OUTCOME,
    UNVERIFIABLE,
    ToolCall,
    ToolResult,
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


def tool_call_correction_checked(
    *, call: ToolCallLog, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Arguments staff give a waiting call in place of the member's, checked as the
    member's were (R4: the schema, the owner's maximum when it was proposed, the
    tool's own checks); raises ``InvalidValue`` saying why not."""
    max_amount = call.max_amount
    tool = published_registry().get(call.tool_name)
    if tool is None:
        raise NotFound(_("No such pending action."))
    corrected, errors = parse_arguments(tool, arguments)
    if corrected is None:
        raise InvalidValue("; ".join(errors))
    if canonical_arguments(corrected) == canonical_arguments(call.arguments or {}):
        raise InvalidValue(_("The corrected request is the same as the original."))
    if over_the_limit(amount_of(tool, corrected), max_amount):
        raise InvalidValue(
            _("The amount is above this gym's limit of %(limit)s.")
            % {"limit": max_amount}
        )
    try:
        write_checked(
            tool,
            corrected,
            business=call.business,
            member=call.member,
            conversation_key=call.conversation_key,
            action_id=call.pk,
            action_key=call.action_key,  # the request corrected
        )
    except NotFound as error:
        raise InvalidValue(str(error)) from None
    except IntegrationError:
        raise InvalidValue(
            _("The corrected request cannot be checked right now; try again.")
        ) from None
    return corrected


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
    with transaction.atomic():
        if not tool_call_decide(
            call_id=call.pk, to=ToolCallLog.SUPERSEDED, actor=actor
        ):
            return None
        new = ToolCallLog.objects.create(
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
            result={**call.result, "status": PENDING_APPROVAL},
            steps=[{"step": "corrected by staff", "difference": difference}],
        )
        tool_call_event(call.pk, "corrected", actor=actor, by=str(new.pk))
        tool_call_event(new.pk, "proposed", actor=actor, corrects=str(call.pk))
    return new


def execution_lease() -> datetime.timedelta:
    """How long an execution may hold its call before its worker is taken to be
    gone: every attempt's timeout, with a margin."""
    return surely_over_after()


def tool_call_resume(*, call_id: Any) -> ToolResult | None:
    """Run an approved call: claim it (approved → executing, with a lease), then
    the dispatcher's remaining steps on its own row. None when it is not approved
    any more: running or done by another delivery, which is left as it is."""
    now = timezone.now()
    with transaction.atomic():
        claimed = ToolCallLog.objects.filter(
            pk=call_id, status=ToolCallLog.APPROVED
        ).update(status=ToolCallLog.EXECUTING, lease_until=now + execution_lease())
        if claimed:
            tool_call_event(call_id, ToolCallLog.EXECUTING)
    if not claimed:
        return None
    call = ToolCallLog.objects.select_related("business", "member").get(pk=call_id)
    tool = published_registry().get(call.tool_name)
    context = CallContext(
        business=call.business,
        member=call.member,
        conversation_key=call.conversation_key,
        message_key=call.message_key,
        offered={call.tool_name: ToolPolicy(mode="gated")},
    )
    trace = Trace()
    trace.steps = [*call.steps, {"step": "approved", "ms": 0}]
    proposed = ToolCall(
        id=call.provider_call_id, name=call.tool_name, arguments=call.arguments or {}
    )
    if tool is None:  # unpublished since it was asked: nothing can run it
        payload = {"message": "This tool is not available any more; nothing was done."}
        return finish_call(
            context,
            call,
            trace,
            proposed,
            FAILED,
            {**payload, "verification": NOT_APPLIED},
        )
    return execute_and_verify(
        tool=tool,
        arguments=dict(call.arguments or {}),
        log=call,
        context=context,
        trace=trace,
        call=proposed,
    )


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
