"""Reads for the staff inbox, always scoped to the businesses of the person asking."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Model, OuterRef, Q, QuerySet, Subquery
from django.db.models.enums import TextChoices
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import StaffRole
from tools.models import Handoff, ToolCallLog
from tools.types import OK, PENDING_APPROVAL, UNKNOWN_OUTCOME


class State(TextChoices):
    """Where a request stands, in the inbox's words (its call's status, grouped:
    every way an execution can fail is *failed*)."""

    PENDING = "pending", _("Pending")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    EXPIRED = "expired", _("Expired")
    SUPERSEDED = "superseded", _("Superseded")
    EXECUTING = "executing", _("Executing")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    UNKNOWN = "unknown", _("Unknown outcome")


#: A request's state for each call status that is not a failure.
_STATES = {
    PENDING_APPROVAL: State.PENDING,
    ToolCallLog.APPROVED: State.APPROVED,
    ToolCallLog.REJECTED: State.REJECTED,
    ToolCallLog.EXPIRED: State.EXPIRED,
    ToolCallLog.SUPERSEDED: State.SUPERSEDED,
    ToolCallLog.EXECUTING: State.EXECUTING,
    OK: State.SUCCEEDED,
    UNKNOWN_OUTCOME: State.UNKNOWN,
}


def request_state(status: str) -> str:
    """The state of a request whose call has ``status``."""
    return _STATES.get(status, State.FAILED).value


def _in_state(state: str) -> Q:
    statuses = [status for status, named in _STATES.items() if named == state]
    return Q(status__in=statuses) if statuses else ~Q(status__in=list(_STATES))


def _businesses(user: AbstractBaseUser | AnonymousUser) -> list[int]:
    """The keys of the user's gyms, read first: given as values rather than as a
    subquery, PostgreSQL plans the inbox's query in a fraction of the time and
    reads a gym's newest rows straight from its index."""
    if not user.is_authenticated:
        return []
    return list(
        StaffRole.objects.filter(user_id=user.pk)
        .values_list("business_id", flat=True)
        .distinct()
    )


#: Rows a page of the inbox or of the cases shows.
PAGE_SIZE = 50

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class Page(Generic[M]):
    """A page of a list, newest first, and the key of its last row when older
    rows follow (what the next page is asked for by), else ``None``."""

    rows: list[M]
    older: str | None


def _page(qs: QuerySet[M], time_field: str, cursor: str, limit: int) -> Page[M]:
    """The rows of ``qs`` newest first by ``time_field`` (then key), after the row
    keyed ``cursor`` when it is one of them: a page stays the same while newer
    rows arrive. One query, and one more for the cursor's place."""
    qs = qs.order_by(f"-{time_field}", "-pk")
    try:
        key = uuid.UUID(cursor) if cursor else None
    except ValueError:  # crafted: the first page
        key = None
    if key is not None:
        place = qs.filter(pk=key).values_list(time_field, flat=True).first()
        if place is not None:
            qs = qs.filter(
                Q(**{f"{time_field}__lt": place})
                | Q(**{time_field: place, "pk__lt": key})
            )
    rows = list(qs[: limit + 1])
    older = str(rows[limit - 1].pk) if len(rows) > limit else None
    return Page(rows[:limit], older)


def pending_actions_for_staff(
    *,
    user: AbstractBaseUser | AnonymousUser,
    status: str = State.PENDING,
    tool: str = "",
    cursor: str = "",
    limit: int = PAGE_SIZE,
) -> Page[ToolCallLog]:
    """A page of the inbox: a gym's requests (the calls that waited for staff),
    newest first, in ``status`` (a ``State``), with their decisions, in one query
    (and one for the place of ``cursor``, the key of the previous page's last row)."""
    qs = ToolCallLog.objects.filter(
        business_id__in=_businesses(user), expires_at__isnull=False
    )
    if status:
        qs = qs.filter(_in_state(status))
    if tool:
        qs = qs.filter(tool_name=tool)
    qs = qs.select_related("member", "business", "decision__decided_by")
    return _page(qs, "created_at", cursor, limit)


def pending_actions_count(*, user: AbstractBaseUser | AnonymousUser) -> int | None:
    """How many requests wait for approval at the user's gyms (the inbox's title
    and the admin's header show it), or ``None`` for a user who works at no gym.
    One query: each of the user's roles with its gym's count."""
    if not user.is_authenticated:
        return None
    waiting = (
        ToolCallLog.objects.filter(
            business_id=OuterRef("business_id"),
            status=PENDING_APPROVAL,
            expires_at__isnull=False,
        )
        .order_by()
        .values("business_id")
        .annotate(count=Count("pk"))
        .values("count")
    )
    counts = list(
        StaffRole.objects.filter(user_id=user.pk)
        .annotate(waiting=Coalesce(Subquery(waiting), 0))
        .values_list("waiting", flat=True)
    )
    return sum(counts) if counts else None


def handoffs_for_staff(
    *,
    user: AbstractBaseUser | AnonymousUser,
    status: str = Handoff.Status.OPEN,
    cursor: str = "",
    limit: int = PAGE_SIZE,
) -> Page[Handoff]:
    """A page of the cases, newest first, as the inbox's pages go."""
    qs = Handoff.objects.filter(business_id__in=_businesses(user))
    if status:
        qs = qs.filter(status=status)
    return _page(
        qs.select_related("business", "member", "tool_call"),
        "created_at",
        cursor,
        limit,
    )


def user_is_gym_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(
        user.is_authenticated and StaffRole.objects.filter(user_id=user.pk).exists()
    )
