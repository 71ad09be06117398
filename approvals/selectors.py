"""Reads for the staff inbox, always scoped to the businesses of the person asking."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

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


def pending_actions_for_staff(
    *,
    user: AbstractBaseUser | AnonymousUser,
    status: str = PendingAction.Status.PENDING,
    tool: str = "",
    limit: int = 50,
) -> list[PendingAction]:
    """The inbox's page: newest first, with what each row shows, in one query."""
    qs = PendingAction.objects.filter(business_id__in=_businesses(user))
    if status:
        qs = qs.filter(status=status)
    if tool:
        qs = qs.filter(tool_name=tool)
    return list(
        qs.select_related(
            "member", "business", "tool_call", "execution", "decided_by"
        ).order_by("-requested_at")[:limit]
    )


def handoffs_for_staff(
    *, user: AbstractBaseUser | AnonymousUser, status: str = Handoff.Status.OPEN
) -> list[Handoff]:
    qs = Handoff.objects.filter(business_id__in=_businesses(user))
    if status:
        qs = qs.filter(status=status)
    return list(qs.select_related("member", "tool_call").order_by("-created_at")[:50])


def user_is_gym_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(
        user.is_authenticated and StaffRole.objects.filter(user_id=user.pk).exists()
    )


#: A request staff may still approve, or approved and about to run.
WAITING = (
    PendingAction.Status.PENDING,
    PendingAction.Status.APPROVED,
    PendingAction.Status.EXECUTING,
)


def pending_arguments(
    *, business_id: Any, member_id: Any, tool_name: str, other_than: str = ""
) -> list[dict[str, Any]]:
    """The arguments of the member's requests of a tool that wait for staff or are
    about to run, but the one whose action key is ``other_than`` (the checks of
    writes behind approval read them)."""
    if member_id is None:
        return []
    return list(
        PendingAction.objects.filter(
            business_id=business_id,
            member_id=member_id,
            tool_name=tool_name,
            status__in=WAITING,
        )
        .exclude(action_key=other_than)
        .order_by("requested_at")
        .values_list("arguments", flat=True)
    )
