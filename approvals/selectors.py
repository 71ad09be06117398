"""Reads for the staff inbox, always scoped to the businesses of the person asking."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Model, Q, QuerySet

from approvals.models import PendingAction
from gymnasia.gyms.models import StaffRole
from tools.models import Handoff


def _businesses(user: AbstractBaseUser | AnonymousUser) -> list[int]:
    """The keys of the user's gyms, read first: given as values rather than as a
    subquery, PostgreSQL plans the inbox's query in a fraction of the time and
    reads a gym's newest rows straight from its index (13 ms became 6.5 ms)."""
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


def _page(qs: QuerySet[M], when: str, before: str, limit: int) -> Page[M]:
    """The rows of ``qs`` newest first by ``when`` (then key), after the row
    ``before`` when it is one of them: a page stays the same while newer rows
    arrive. One query, and one more for ``before``'s place."""
    qs = qs.order_by(f"-{when}", "-pk")
    try:
        cursor = uuid.UUID(before) if before else None
    except ValueError:  # crafted: the first page
        cursor = None
    if cursor is not None:
        place = qs.filter(pk=cursor).values_list(when, flat=True).first()
        if place is not None:
            qs = qs.filter(
                Q(**{f"{when}__lt": place}) | Q(**{when: place, "pk__lt": cursor})
            )
    rows = list(qs[: limit + 1])
    older = str(rows[limit - 1].pk) if len(rows) > limit else None
    return Page(rows[:limit], older)


def pending_actions_for_staff(
    *,
    user: AbstractBaseUser | AnonymousUser,
    status: str = PendingAction.Status.PENDING,
    tool: str = "",
    before: str = "",
    limit: int = PAGE_SIZE,
) -> Page[PendingAction]:
    """A page of the inbox: newest first, with what each row shows, in one query
    (and one for the place of ``before``, the last row of the page before)."""
    qs = PendingAction.objects.filter(business_id__in=_businesses(user))
    if status:
        qs = qs.filter(status=status)
    if tool:
        qs = qs.filter(tool_name=tool)
    qs = qs.select_related("member", "business", "tool_call", "execution", "decided_by")
    return _page(qs, "requested_at", before, limit)


def handoffs_for_staff(
    *,
    user: AbstractBaseUser | AnonymousUser,
    status: str = Handoff.Status.OPEN,
    before: str = "",
    limit: int = PAGE_SIZE,
) -> Page[Handoff]:
    """A page of the cases, newest first, as the inbox's pages go."""
    qs = Handoff.objects.filter(business_id__in=_businesses(user))
    if status:
        qs = qs.filter(status=status)
    return _page(qs.select_related("member", "tool_call"), "created_at", before, limit)


def user_is_gym_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(
        user.is_authenticated and StaffRole.objects.filter(user_id=user.pk).exists()
    )
