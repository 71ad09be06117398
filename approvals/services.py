"""Pending actions: queued by the dispatcher, decided once by staff, executed once.

Every transition is a compare-and-set on the current status in the database, so two
people clicking at once, an approval racing a rejection, or a decision racing the
expiry sweep end with exactly one decision; the call's own state moves with it, in
the same transaction (``tools.calls``). An approved action runs in a Celery task that
resumes the call (``tool_call_resume``): the call claims its execution with a lease,
and a delivery that finds it running or done does nothing more. Only a lease that
passed with no outcome (the worker is gone) makes it *unknown*, handed to a person,
never run twice (R6, R9).
"""

from __future__ import annotations

import datetime
import uuid
from decimal import Decimal
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.outcomes import INTERRUPTED, conversation_outcome_post
from approvals.models import PendingAction, PendingActionEvent
from approvals.presentation import CORRECTED
from gymnasia.errors import Conflict, InvalidValue, NotFound
from gymnasia.gyms.models import StaffRole
from gymnasia.text import text_checked_storable
from tools.calls import (
    tool_call_correct,
    tool_call_correction_checked,
    tool_call_decide,
    tool_call_resume,
    tool_calls_abandoned_hand_over,
)
from tools.models import ToolCallLog
from tools.presentation import TOOL_TITLES
from tools.types import OK, UNKNOWN_OUTCOME

DEFAULT_VALIDITY = datetime.timedelta(hours=24)
#: An approved action whose task has not started after this long lost its message.
LOST_MESSAGE_AFTER = datetime.timedelta(minutes=2)

Status = PendingAction.Status


def _event(action_id: Any, kind: str, actor: Any = None, **parameters: Any) -> None:
    PendingActionEvent.objects.create(
        action_id=action_id, kind=kind, actor=actor, parameters=parameters
    )


def pending_action_create(
    *,
    log: ToolCallLog,
    arguments: dict[str, Any],
    valid_for: datetime.timedelta | None = None,
    max_amount: Decimal | None = None,
) -> str:
    """Queue a gated call for staff approval (the dispatcher's approvals queue)."""
    now = timezone.now()
    with transaction.atomic():
        action = PendingAction.objects.create(
            business_id=log.business_id,
            member_id=log.member_id,
            conversation_key=log.conversation_key,
            tool_name=log.tool_name,
            arguments=arguments,
            action_key=log.action_key,
            tool_call=log,
            requested_at=now,
            expires_at=now + (valid_for or DEFAULT_VALIDITY),
            max_amount=max_amount,
        )
        _event(action.pk, "requested", arguments=arguments)
    return str(action.pk)


def pending_action_for_staff(
    *, action_id: Any, user: AbstractBaseUser
) -> PendingAction:
    """The action, if the user works at its business; otherwise not found, exactly
    as if it did not exist."""
    try:
        key = uuid.UUID(str(action_id))
    except ValueError:  # an id no action can have (a crafted form)
        raise NotFound(_("No such pending action.")) from None
    roles = StaffRole.objects.filter(user_id=user.pk).values("business_id")
    action = PendingAction.objects.filter(pk=key, business_id__in=roles).first()
    if action is None:
        raise NotFound(_("No such pending action."))
    return action


def _tell_member(
    action: PendingAction,
    status: str,
    payload: dict[str, Any] | None = None,
    changes: dict[str, Any] | None = None,
) -> None:
    """Post the outcome into the member's conversation (see ``agents.outcomes``)."""
    conversation_outcome_post(
        conversation_key=action.conversation_key,
        action_id=str(action.pk),
        tool_name=action.tool_name,
        title=TOOL_TITLES.get(action.tool_name, action.tool_name),
        arguments=dict(action.arguments),
        status=status,
        payload=payload,
        reason=action.decision_reason,
        changes=changes,
    )


#: The longest reason staff may give for a decision (the member reads it).
REASON_MAX = 1000


def _decide(
    action_id: Any, user: AbstractBaseUser, to: str, reason: str
) -> PendingAction:
    if len(reason) > REASON_MAX:
        raise InvalidValue(
            _("The reason is too long: at most %(count)s characters.")
            % {"count": REASON_MAX}
        )
    text_checked_storable(reason)
    action = pending_action_for_staff(action_id=action_id, user=user)
    now = timezone.now()
    with transaction.atomic():
        changed = PendingAction.objects.filter(
            pk=action.pk, status=Status.PENDING, expires_at__gt=now
        ).update(status=to, decided_by=user, decided_at=now, decision_reason=reason)
        if changed:
            tool_call_decide(
                call_id=action.tool_call_id, to=to, actor=user, reason=reason
            )
            _event(action.pk, to, actor=user, reason=reason)
            if to == Status.APPROVED:
                from approvals.tasks import execute_approved_action

                # robust: a broker that is down must not undo the approval; the
                # sweep sends the task again once it is back.
                transaction.on_commit(
                    lambda: execute_approved_action.delay(str(action.pk)), robust=True
                )
    if not changed:
        raise _already_decided(action, now)
    action.refresh_from_db()
    if to == Status.REJECTED:
        _tell_member(action, Status.REJECTED)
    return action


def _already_decided(action: PendingAction, now: datetime.datetime) -> Conflict:
    """The refusal of a decision on a request no longer pending, saying what it
    became; one whose time is up is expired first (the member is told)."""
    pending_actions_expire(now=now)
    action.refresh_from_db()
    return Conflict(
        _("This request was already decided: %(status)s.")
        % {"status": action.get_status_display()}
    )


def pending_action_approve(
    *, action_id: Any, user: AbstractBaseUser, reason: str = ""
) -> PendingAction:
    """Approve once; the action runs in a Celery task after the commit."""
    return _decide(action_id, user, Status.APPROVED, reason)


def pending_action_reject(
    *, action_id: Any, user: AbstractBaseUser, reason: str = ""
) -> PendingAction:
    """Reject once, with the staff's reason when given."""
    return _decide(action_id, user, Status.REJECTED, reason)


def pending_action_correct(
    *, action_id: Any, user: AbstractBaseUser, arguments: dict[str, Any]
) -> PendingAction:
    """Staff correct the arguments before approving (e.g. another class session).

    The correction is a new binding (its own verification log row and action key),
    the difference is recorded in both trails, and the original is superseded; the
    member is told. The new arguments are checked now against the tool's schema and
    its business checks (R4), and again by the business rules when it runs.
    """
    action = pending_action_for_staff(action_id=action_id, user=user)
    corrected = tool_call_correction_checked(
        call=action.tool_call, arguments=arguments, max_amount=action.max_amount
    )
    difference = {
        key: [action.arguments.get(key), corrected.get(key)]
        for key in sorted(set(action.arguments) | set(corrected))
        if action.arguments.get(key) != corrected.get(key)
    }
    now = timezone.now()
    new = _superseded(action, user, corrected, difference, now)
    if new is None:
        raise _already_decided(action, now)
    action.refresh_from_db()
    _tell_member(action, Status.SUPERSEDED, changes=difference)
    return new


def _superseded(
    action: PendingAction,
    user: AbstractBaseUser,
    corrected: dict[str, Any],
    difference: dict[str, Any],
    now: datetime.datetime,
) -> PendingAction | None:
    """The correction's new request, the original superseded by it, in one
    transaction; like a decision, once, and not once the request's time is up
    (None: the original is no longer pending)."""
    with transaction.atomic():
        if not PendingAction.objects.filter(
            pk=action.pk, status=Status.PENDING, expires_at__gt=now
        ).update(
            status=Status.SUPERSEDED,
            decided_by=user,
            decided_at=now,
            decision_reason=CORRECTED,
        ):
            return None
        log = tool_call_correct(
            call=action.tool_call,
            arguments=corrected,
            actor=user,
            difference=difference,
        )
        if log is None:  # the call had stopped waiting: the two move together
            transaction.set_rollback(True)
            return None
        new = PendingAction.objects.create(
            business_id=action.business_id,
            member_id=action.member_id,
            conversation_key=action.conversation_key,
            tool_name=action.tool_name,
            arguments=corrected,
            action_key=log.action_key,
            tool_call=log,
            requested_at=now,
            expires_at=action.expires_at,
            max_amount=action.max_amount,
        )
        _event(
            action.pk,
            Status.SUPERSEDED,
            actor=user,
            by=str(new.pk),
            difference=difference,
        )
        _event(
            new.pk,
            "requested",
            actor=user,
            corrects=str(action.pk),
            difference=difference,
        )
    return new


def pending_actions_expire(*, now: datetime.datetime | None = None) -> int:
    """Expire every pending action whose time is up; each one exactly once."""
    now = now or timezone.now()
    expired = 0
    overdue = PendingAction.objects.filter(status=Status.PENDING, expires_at__lte=now)
    for action_id, call_id in overdue.values_list("pk", "tool_call"):
        with transaction.atomic():
            if PendingAction.objects.filter(
                pk=action_id, status=Status.PENDING, expires_at__lte=now
            ).update(status=Status.EXPIRED, decided_at=now):
                tool_call_decide(call_id=call_id, to=Status.EXPIRED)
                _event(action_id, "expired")
                expired += 1
                transaction.on_commit(partial(_tell_expired, action_id))
    return expired


def _tell_expired(action_id: Any) -> None:
    _tell_member(PendingAction.objects.get(pk=action_id), Status.EXPIRED)


def pending_action_execute(*, action_id: Any) -> str:
    """Run an approved action: the call resumes where it paused (execute, verify,
    hand off), once whatever the deliveries; the task's body."""
    action = PendingAction.objects.filter(pk=action_id).first()
    if action is None:
        return "missing"
    with transaction.atomic():
        if PendingAction.objects.filter(pk=action.pk, status=Status.APPROVED).update(
            status=Status.EXECUTING,
            started_at=timezone.now(),
            execution=action.tool_call_id,
        ):
            _event(action.pk, "executing", execution=str(action.tool_call_id))
    result = tool_call_resume(call_id=action.tool_call_id)
    if result is None:  # running or ran in another delivery: nothing more
        action.refresh_from_db()
        return str(action.status)
    return _settled(action, result.status, dict(result.payload))


def _settled(action: PendingAction, status: str, payload: dict[str, Any]) -> str:
    """Record the outcome of an approved action's call, once, and tell the member
    (whoever records it first tells)."""
    final = (
        Status.SUCCEEDED
        if status == OK
        else Status.UNKNOWN
        if status == UNKNOWN_OUTCOME
        else Status.FAILED
    )
    with transaction.atomic():
        recorded = PendingAction.objects.filter(
            pk=action.pk, status__in=(Status.APPROVED, Status.EXECUTING)
        ).update(
            status=final,
            finished_at=timezone.now(),
            outcome=payload,
            execution=action.tool_call_id,
        )
        if recorded:
            _event(action.pk, final, result=payload)
    if recorded:
        _tell_member(action, final, payload)
    return str(final)


def pending_actions_sweep(*, now: datetime.datetime | None = None) -> dict[str, int]:
    """The periodic sweep: expire overdue requests, re-send approved actions whose
    task message was lost, hand to staff the calls whose execution's lease passed
    (an approved action's worker, or a turn, that stopped while it ran), and
    record the outcome of an approved action whose task stopped after its call
    ended."""
    now = now or timezone.now()
    expired = pending_actions_expire(now=now)
    from approvals.tasks import execute_approved_action

    lost = list(
        PendingAction.objects.filter(
            status__in=(Status.APPROVED, Status.EXECUTING),
            tool_call__status=ToolCallLog.APPROVED,
            decided_at__lte=now - LOST_MESSAGE_AFTER,
        ).values_list("pk", flat=True)
    )
    for action_id in lost:
        execute_approved_action.delay(str(action_id))
    unknown = interrupted = 0
    for call in tool_calls_abandoned_hand_over(now=now):
        action = PendingAction.objects.filter(tool_call=call).first()
        if action is not None:
            _settled(action, call.status, dict(call.result))
            unknown += 1
            continue
        interrupted += 1
        conversation_outcome_post(
            conversation_key=call.conversation_key,
            action_id=str(call.pk),
            tool_name=call.tool_name,
            title=TOOL_TITLES.get(call.tool_name, call.tool_name),
            arguments=dict(call.arguments or {}),
            status=INTERRUPTED,
        )
    ended = PendingAction.objects.filter(status=Status.EXECUTING).exclude(
        tool_call__status__in=(ToolCallLog.APPROVED, ToolCallLog.EXECUTING)
    )
    for action in ended.select_related("tool_call"):
        _settled(action, action.tool_call.status, dict(action.tool_call.result))
    return {
        "expired": expired,
        "resent": len(lost),
        "unknown": unknown,
        "interrupted": interrupted,
    }
