"""Pending actions: queued by the dispatcher, decided once by staff, executed once.

Every transition is a compare-and-set on the current status in the database, so two
people clicking at once, an approval racing a rejection, or a decision racing the
expiry sweep end with exactly one decision. An approved action runs in a Celery task
that first commits an *executing* marker; a task that finds the marker already there
cannot prove the first attempt did nothing, so the action becomes *unknown* and goes
to a person instead of running twice (R6, R9).
"""

from __future__ import annotations

import datetime
import uuid
from decimal import Decimal
from functools import partial
from typing import Any

from django.conf import settings
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
from tools.canonical import action_key, canonical_arguments
from tools.dispatcher import amount_of, over_the_limit, parse_arguments
from tools.execution import (
    CallContext,
    execute_and_verify,
    surely_over_after,
    write_checked,
)
from tools.integrations.errors import IntegrationError
from tools.models import Handoff, ToolCallLog
from tools.presentation import TOOL_TITLES
from tools.registry import published_registry
from tools.selection import ToolPolicy
from tools.services import handoff_create, tool_call_interrupted_hand_over
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
    tool = published_registry().get(action.tool_name)
    if tool is None:
        raise NotFound(_("No such pending action."))
    corrected, errors = parse_arguments(tool, arguments)
    if corrected is None:
        raise InvalidValue("; ".join(errors))
    if canonical_arguments(corrected) == canonical_arguments(action.arguments):
        raise InvalidValue(_("The corrected request is the same as the original."))
    if over_the_limit(amount_of(tool, corrected), action.max_amount):
        raise InvalidValue(
            _("The amount is above this gym's limit of %(limit)s.")
            % {"limit": action.max_amount}
        )
    try:
        write_checked(
            tool,
            corrected,
            business=action.business,
            member=action.member,
            conversation_key=action.conversation_key,
            action_id=uuid.uuid4(),
            action_key=action.action_key,  # the request corrected
        )
    except NotFound as error:
        raise InvalidValue(str(error)) from None
    except IntegrationError:
        raise InvalidValue(
            _("The corrected request cannot be checked right now; try again.")
        ) from None
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
        original = action.tool_call
        log = ToolCallLog.objects.create(
            business_id=action.business_id,
            member_id=action.member_id,
            conversation_key=action.conversation_key,
            message_key=original.message_key,
            provider_call_id=original.provider_call_id,
            tool_name=action.tool_name,
            effect="write",
            arguments=corrected,
            action_key=action_key(
                business_id=action.business_id,
                conversation_key=action.conversation_key,
                tool_name=action.tool_name,
                arguments=corrected,
            ),
            offered=True,
            valid=True,
            gated=True,
            status="pending_approval",
            verification="not_applied",
            steps=[{"step": "corrected by staff", "difference": difference}],
        )
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
    for action_id in overdue.values_list("pk", flat=True):
        with transaction.atomic():
            if PendingAction.objects.filter(
                pk=action_id, status=Status.PENDING, expires_at__lte=now
            ).update(status=Status.EXPIRED, decided_at=now):
                _event(action_id, "expired")
                expired += 1
                transaction.on_commit(partial(_tell_expired, action_id))
    return expired


def _tell_expired(action_id: Any) -> None:
    _tell_member(PendingAction.objects.get(pk=action_id), Status.EXPIRED)


def _claim(action_id: Any) -> PendingAction | None:
    """Move an approved action to executing and commit that before any effect."""
    with transaction.atomic():
        now = timezone.now()
        if not PendingAction.objects.filter(
            pk=action_id, status=Status.APPROVED
        ).update(status=Status.EXECUTING, started_at=now):
            return None
        action = PendingAction.objects.select_related(
            "business", "member", "tool_call"
        ).get(pk=action_id)
        original = action.tool_call
        action.execution = ToolCallLog.objects.create(
            business=action.business,
            member=action.member,
            conversation_key=action.conversation_key,
            # The turn that asked: a case handed to staff shows it.
            message_key=original.message_key,
            provider_call_id=original.provider_call_id,
            tool_name=action.tool_name,
            effect="write",
            arguments_raw=original.arguments_raw,
            arguments=action.arguments,
            action_key=action.action_key,
            offered=True,
            valid=True,
            status=ToolCallLog.EXECUTING,
            steps=[{"step": "approved", "ms": 0, "pending_action": str(action.pk)}],
        )
        action.save(update_fields=["execution"])
        _event(action.pk, "executing", execution=str(action.execution.pk))
    return action


def _unknown_after_redelivery(action_id: Any) -> None:
    """A second delivery found the executing marker: nobody knows what the first
    attempt did, so a person takes it; it is never executed again."""
    with transaction.atomic():
        action = PendingAction.objects.select_for_update().get(pk=action_id)
        if action.status != Status.EXECUTING:
            return
        handoff = handoff_create(
            business=action.business,
            member=action.member,
            conversation_key=action.conversation_key,
            cause=Handoff.Cause.WORKER_STOPPED,
            tried={"tool": action.tool_name, "arguments": action.arguments},
            tool_call=action.execution,
        )
        action.status = Status.UNKNOWN
        action.finished_at = timezone.now()
        action.outcome = {"status": UNKNOWN_OUTCOME, "handoff": str(handoff.pk)}
        action.save(update_fields=["status", "finished_at", "outcome"])
        _event(action.pk, "unknown", reason="redelivered", handoff=str(handoff.pk))
        transaction.on_commit(
            lambda: _tell_member(action, Status.UNKNOWN, action.outcome)
        )


def pending_action_execute(*, action_id: Any) -> str:
    """Run an approved action once, verify it, record the outcome; the task's body."""
    action = _claim(action_id)
    if action is None:
        current = (
            PendingAction.objects.filter(pk=action_id)
            .values_list("status", flat=True)
            .first()
        )
        if current == Status.EXECUTING:
            _unknown_after_redelivery(action_id)
        return str(current or "missing")
    tool = published_registry().get(action.tool_name)
    if tool is None or action.execution is None:
        raise LookupError(f"{action.tool_name} is not a published tool")
    context = CallContext(
        business=action.business,
        member=action.member,
        conversation_key=action.conversation_key,
        offered={tool.name: ToolPolicy(mode="auto")},
    )
    result = execute_and_verify(
        tool=tool,
        arguments=dict(action.arguments),
        log=action.execution,
        context=context,
    )
    final = (
        Status.SUCCEEDED
        if result.status == OK
        else Status.UNKNOWN
        if result.status == UNKNOWN_OUTCOME
        else Status.FAILED
    )
    with transaction.atomic():
        recorded = PendingAction.objects.filter(
            pk=action.pk, status=Status.EXECUTING
        ).update(status=final, finished_at=timezone.now(), outcome=dict(result.payload))
        _event(
            action.pk,
            final if recorded else "late_result",
            result=dict(result.payload),
        )
    if recorded:
        _tell_member(action, final, dict(result.payload))
    return str(final)


def pending_actions_sweep(*, now: datetime.datetime | None = None) -> dict[str, int]:
    """The periodic sweep: expire overdue requests, re-send approved actions whose
    task message was lost, and hand over actions stuck in *executing* and the
    writes of turns that stopped while they ran."""
    now = now or timezone.now()
    expired = pending_actions_expire(now=now)
    from approvals.tasks import execute_approved_action

    lost = list(
        PendingAction.objects.filter(
            status=Status.APPROVED, decided_at__lte=now - LOST_MESSAGE_AFTER
        ).values_list("pk", flat=True)
    )
    for action_id in lost:
        execute_approved_action.delay(str(action_id))
    stuck_after = datetime.timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 60)
    stuck = list(
        PendingAction.objects.filter(
            status=Status.EXECUTING, started_at__lte=now - stuck_after
        ).values_list("pk", flat=True)
    )
    for action_id in stuck:
        _unknown_after_redelivery(action_id)
    interrupted = turn_calls_interrupted_hand_over(now=now)
    return {
        "expired": expired,
        "resent": len(lost),
        "unknown": len(stuck),
        "interrupted": interrupted,
    }


def turn_calls_interrupted_hand_over(*, now: datetime.datetime) -> int:
    """Hand to staff the writes of turns that stopped while they ran (R9), and tell
    the member in R10's words. Approved actions' executions have their own path
    above, and a queued call's record belongs to its pending action."""
    stuck = ToolCallLog.objects.filter(
        status=ToolCallLog.EXECUTING,
        created_at__lte=now - surely_over_after(),
        pending_action__isnull=True,
        approved_action__isnull=True,
    ).select_related("business", "member")
    handed_over = 0
    for log in stuck:
        if tool_call_interrupted_hand_over(log=log, now=now) is None:
            continue  # it finished meanwhile
        handed_over += 1
        conversation_outcome_post(
            conversation_key=log.conversation_key,
            action_id=str(log.pk),
            tool_name=log.tool_name,
            title=TOOL_TITLES.get(log.tool_name, log.tool_name),
            arguments=dict(log.arguments or {}),
            status=INTERRUPTED,
        )
    return handed_over
