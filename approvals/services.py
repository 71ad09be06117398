"""Requests (calls paused for staff): decided once by staff, executed once.

A request is a call waiting on its own row; a decision is a compare-and-set of
the call's state (``tools.calls``), recorded as a ``Decision`` in the same
transaction, so two people clicking at once, an approval racing a rejection, or a
decision racing the expiry sweep end with exactly one decision. An approved call
runs in a Celery task that resumes it (``dispatch_approved``): the call claims its
execution with a lease, and a delivery that finds it running or done does nothing
more. Only a lease that passed with no outcome (the worker is gone) makes it
*unknown*, handed to a person, never run twice (R6, R9). The member is told the
outcome once: whoever marks the decision told first tells.
"""

from __future__ import annotations

import datetime
import uuid
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.outcomes import (
    INTERRUPTED,
    conversation_handoff_settled,
    conversation_outcome_post,
)
from approvals.events import (
    decision_record,
    event_record,
    handoff_data,
    notices_due,
    notices_remind,
)
from approvals.models import Decision, Event
from approvals.presentation import CORRECTED
from approvals.selectors import State, request_state
from approvals.webhooks import webhook_deliveries_sweep
from gymnasia.errors import Conflict, InvalidValue, NotAllowed, NotFound
from gymnasia.gyms.models import StaffRole
from gymnasia.text import text_checked_storable
from tools.calls import (
    tool_call_correct,
    tool_call_decide,
    tool_calls_abandoned_hand_over,
)
from tools.dispatcher import correction_checked, dispatch_approved
from tools.models import Handoff, ToolCallLog
from tools.services import handoff_resolve
from tools.types import PENDING_APPROVAL

#: An approved request whose task has not started after this long lost its message.
LOST_MESSAGE_AFTER = datetime.timedelta(minutes=2)
#: The states of an approved request's call before it has an outcome.
RUNNING = (ToolCallLog.APPROVED, ToolCallLog.EXECUTING)


def pending_action_for_staff(*, action_id: Any, user: AbstractBaseUser) -> ToolCallLog:
    """The request (the call that waited for staff), if the user works at its
    business; otherwise not found, exactly as if it did not exist."""
    try:
        key = uuid.UUID(str(action_id))
    except ValueError:  # an id no request can have (a crafted form)
        raise NotFound(_("No such pending action.")) from None
    roles = StaffRole.objects.filter(user_id=user.pk).values("business_id")
    call = ToolCallLog.objects.filter(
        pk=key, business_id__in=roles, expires_at__isnull=False
    ).first()
    if call is None:
        raise NotFound(_("No such pending action."))
    return call


#: The roles whose people decide requests and settle cases.
DECIDING_ROLES = (StaffRole.Role.OWNER, StaffRole.Role.STAFF)


def decider_checked(*, user: AbstractBaseUser, business_id: Any) -> None:
    """Refuse, in words, a person who may no longer decide at this gym: an account
    deactivated, or no role there that decides. Whatever the way in (the inbox, a
    link mailed earlier, a script), the right that counts is the one held now,
    read from the database, not from the ``user`` the caller holds."""
    held = (
        StaffRole.objects.filter(user_id=user.pk, business_id=business_id)
        .values_list("role", "user__is_active")
        .first()
    )
    if held is not None and not held[1]:
        raise NotAllowed(
            _("This account was deactivated: it can no longer decide requests.")
        )
    if held is None or held[0] not in DECIDING_ROLES:
        raise NotAllowed(
            _("You no longer have a role at this gym that decides its requests.")
        )


def _tell_member(
    call: ToolCallLog,
    state: str,
    payload: dict[str, Any] | None = None,
    *,
    reason: str = "",
    changes: dict[str, Any] | None = None,
) -> None:
    """Post the outcome into the member's conversation (see ``agents.outcomes``)."""
    conversation_outcome_post(
        conversation_key=call.conversation_key,
        action_id=str(call.pk),
        tool_name=call.tool_name,
        arguments=dict(call.arguments or {}),
        status=state,
        payload=payload,
        reason=reason,
        changes=changes,
    )


#: The longest reason staff may give for a decision (the member reads it).
REASON_MAX = 1000


def _decide(
    action_id: Any, user: AbstractBaseUser, to: str, reason: str
) -> ToolCallLog:
    if len(reason) > REASON_MAX:
        raise InvalidValue(
            _("The reason is too long: at most %(count)s characters.")
            % {"count": REASON_MAX}
        )
    text_checked_storable(reason)
    call = pending_action_for_staff(action_id=action_id, user=user)
    now = timezone.now()
    with transaction.atomic():
        decider_checked(user=user, business_id=call.business_id)
        changed = tool_call_decide(
            call_id=call.pk, to=to, actor=user, reason=reason, now=now
        )
        if changed:
            decision_record(
                Decision.objects.create(
                    business_id=call.business_id,
                    call=call,
                    kind=to,
                    decided_by_id=user.pk,
                    decided_at=now,
                    reason=reason,
                )
            )
            if to == Decision.Kind.APPROVED:
                from approvals.tasks import execute_approved_action

                # robust: a broker that is down must not undo the approval; the
                # sweep sends the task again once it is back.
                transaction.on_commit(
                    lambda: execute_approved_action.delay(str(call.pk)), robust=True
                )
    if not changed:
        raise _already_decided(call, now)
    call.refresh_from_db()
    if to == Decision.Kind.REJECTED:
        _tell_member(call, State.REJECTED, reason=reason)
    return call


def _already_decided(call: ToolCallLog, now: datetime.datetime) -> Conflict:
    """The refusal of a decision on a request no longer pending, saying what it
    became; one whose time is up is expired first (the member is told)."""
    pending_actions_expire(now=now)
    call.refresh_from_db()
    return Conflict(
        _("This request was already decided: %(status)s.")
        % {"status": State(request_state(call.status)).label}
    )


def pending_action_approve(
    *, action_id: Any, user: AbstractBaseUser, reason: str = ""
) -> ToolCallLog:
    """Approve once; the call runs in a Celery task after the commit."""
    return _decide(action_id, user, Decision.Kind.APPROVED, reason)


def pending_action_reject(
    *, action_id: Any, user: AbstractBaseUser, reason: str = ""
) -> ToolCallLog:
    """Reject once, with the staff's reason when given."""
    return _decide(action_id, user, Decision.Kind.REJECTED, reason)


def pending_action_correct(
    *, action_id: Any, user: AbstractBaseUser, arguments: dict[str, Any]
) -> ToolCallLog:
    """Staff correct the arguments before approving (e.g. another class session).

    The correction is a new request (its own call, action key and verification
    log row), the original is superseded by it with the difference recorded, and
    the member is told. The new arguments are checked now against the tool's
    schema and its business checks (R4), and again by the business rules when it
    runs. Returns the new request.
    """
    call = pending_action_for_staff(action_id=action_id, user=user)
    corrected = correction_checked(call=call, arguments=arguments)
    asked = call.arguments or {}
    difference = {
        key: [asked.get(key), corrected.get(key)]
        for key in sorted(set(asked) | set(corrected))
        if asked.get(key) != corrected.get(key)
    }
    now = timezone.now()
    with transaction.atomic():
        decider_checked(user=user, business_id=call.business_id)
        new = tool_call_correct(
            call=call, arguments=corrected, actor=user, difference=difference
        )
        if new is not None:
            decision_record(
                Decision.objects.create(
                    business_id=call.business_id,
                    call=call,
                    kind=Decision.Kind.SUPERSEDED,
                    decided_by_id=user.pk,
                    decided_at=now,
                    reason=CORRECTED,
                    corrected_to=new,
                    difference=difference,
                )
            )
    if new is None:
        raise _already_decided(call, now)
    _tell_member(call, State.SUPERSEDED, changes=difference)
    return new


def pending_actions_expire(*, now: datetime.datetime | None = None) -> int:
    """Expire every request whose time is up; each one exactly once."""
    now = now or timezone.now()
    expired = 0
    overdue = ToolCallLog.objects.filter(
        status=PENDING_APPROVAL, expires_at__lte=now
    ).values_list("pk", "business_id")
    for call_id, business_id in overdue:
        with transaction.atomic():
            if tool_call_decide(call_id=call_id, to=ToolCallLog.EXPIRED, now=now):
                decision_record(
                    Decision.objects.create(
                        business_id=business_id,
                        call_id=call_id,
                        kind=Decision.Kind.EXPIRED,
                        decided_at=now,
                    )
                )
                expired += 1
                transaction.on_commit(partial(_tell_expired, call_id))
    return expired


def _tell_expired(call_id: Any) -> None:
    _tell_member(ToolCallLog.objects.get(pk=call_id), State.EXPIRED)


def pending_action_execute(*, action_id: Any) -> str:
    """Run an approved request: the call resumes where it paused (execute, verify,
    hand off), once whatever the deliveries; the task's body. Returns the
    request's state as the inbox names it."""
    result = dispatch_approved(call_id=action_id)
    call = ToolCallLog.objects.filter(pk=action_id).first()
    if call is None:
        return "missing"
    if result is not None:
        _settled(call)
    return request_state(call.status)


def _settled(call: ToolCallLog) -> None:
    """Tell the member the outcome of an approved request's call, once: whoever
    marks its decision told first tells."""
    told = Decision.objects.filter(
        call_id=call.pk, kind=Decision.Kind.APPROVED, told_at__isnull=True
    ).update(told_at=timezone.now())
    if told:
        _tell_member(call, request_state(call.status), dict(call.result))


def pending_actions_sweep(*, now: datetime.datetime | None = None) -> dict[str, int]:
    """The periodic sweep: expire overdue requests, re-send approved ones whose
    task message was lost, hand to staff the calls whose execution's lease passed
    (an approved request's worker, or a turn, that stopped while it ran), and
    tell the outcome of an approved request whose task stopped after its call
    ended."""
    now = now or timezone.now()
    expired = pending_actions_expire(now=now)
    from approvals.tasks import execute_approved_action

    lost = list(
        Decision.objects.filter(
            kind=Decision.Kind.APPROVED,
            told_at__isnull=True,
            call__status=ToolCallLog.APPROVED,
            decided_at__lte=now - LOST_MESSAGE_AFTER,
        ).values_list("call_id", flat=True)
    )
    for call_id in lost:
        execute_approved_action.delay(str(call_id))
    interrupted = 0
    handed_over = tool_calls_abandoned_hand_over(now=now)
    for call in handed_over:
        if call.expires_at is None:  # a turn's write: no decision to tell by
            interrupted += 1
            _tell_member(call, INTERRUPTED)
    reminded = notices_remind(now=now)
    mailed = notices_due(now=now)
    webhooks = webhook_deliveries_sweep(now=now)
    untold = Decision.objects.filter(
        kind=Decision.Kind.APPROVED, told_at__isnull=True
    ).exclude(call__status__in=RUNNING)
    told = 0
    for decision in untold.select_related("call"):
        _settled(decision.call)
        told += 1
    return {
        "expired": expired,
        "resent": len(lost),
        "unknown": len(handed_over) - interrupted,
        "interrupted": interrupted,
        "told": told,
        **reminded,
        "mailed": mailed,
        "webhooks": webhooks,
    }


def handoff_settle(
    *, handoff_id: Any, user: AbstractBaseUser, resolution: str, note: str = ""
) -> Handoff:
    """Record what actually happened with a case (``tools``' one service), tell
    the gym's own tools (``handoff.resolved``), then the member."""
    if not user.is_active:  # the case's business is checked by its role below
        raise NotAllowed(
            _("This account was deactivated: it can no longer decide requests.")
        )
    with transaction.atomic():
        handoff = handoff_resolve(
            handoff_id=handoff_id,
            business_ids=StaffRole.objects.filter(
                user_id=user.pk, role__in=DECIDING_ROLES, user__is_active=True
            ).values("business_id"),
            user=user,
            resolution=resolution,
            note=note,
        )
        event_record(
            business_id=handoff.business_id,
            type=Event.Type.HANDOFF_RESOLVED,
            data=handoff_data(handoff),
            handoff=handoff,
        )
    conversation_handoff_settled(
        conversation_key=handoff.conversation_key,
        resolution=handoff.resolution,
        note=handoff.note,
    )
    return handoff
