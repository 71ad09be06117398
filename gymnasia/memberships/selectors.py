"""Reads of memberships and their freezes."""

from __future__ import annotations

import datetime

from gymnasia.gyms.models import Business, Member
from gymnasia.memberships.models import Membership


def membership_current(*, business: Business, member: Member) -> Membership | None:
    """The member's membership that counts now: the latest-ending one not cancelled,
    else the latest-ending one."""
    qs = Membership.objects.filter(business=business, member=member).prefetch_related(
        "freezes"
    )
    return (
        qs.exclude(status=Membership.Status.CANCELLED)
        .order_by("-ends_on", "-pk")
        .first()
        or qs.order_by("-ends_on", "-pk").first()
    )


def membership_state_on(*, membership: Membership, day: datetime.date) -> str:
    """The membership's status on a given day: active, frozen, cancelled or expired."""
    if membership.status == Membership.Status.CANCELLED:
        return "cancelled"
    if not (membership.starts_on <= day <= membership.ends_on):
        return "expired" if day > membership.ends_on else "not_started"
    if membership.status == Membership.Status.FROZEN:
        return "frozen"
    if any(f.start <= day <= f.end for f in membership.freezes.all()):
        return "frozen"
    return "active"
