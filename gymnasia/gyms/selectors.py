"""Reads of businesses, roles and members."""

from __future__ import annotations

import datetime
import zoneinfo

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from gymnasia.errors import NotFound
from gymnasia.gyms.models import Business, Member, StaffRole


def business_today(*, business: Business) -> datetime.date:
    """Today's date where the gym is."""
    return timezone.localtime(timezone.now(), business.zone).date()


def businesses_for_user(
    *, user: AbstractBaseUser | AnonymousUser, roles: tuple[str, ...] | None = None
) -> QuerySet[Business]:
    """The businesses where the user holds one of the roles (any role by default)."""
    if not user.is_authenticated:
        return Business.objects.none()
    qs = StaffRole.objects.filter(user_id=user.pk)
    if roles is not None:
        qs = qs.filter(role__in=roles)
    return Business.objects.filter(pk__in=qs.values("business_id"))


def time_zone_for_user(
    *, user: AbstractBaseUser | AnonymousUser
) -> zoneinfo.ZoneInfo | None:
    """The time zone staff pages use for this person: that of their gyms (of every
    gym, for a superuser) when they all share one; ``None`` when there is no gym
    or the gyms are in several zones (the pages then keep the server's, UTC)."""
    if not user.is_authenticated:
        return None
    businesses = (
        Business.objects.all()
        if getattr(user, "is_superuser", False)
        else businesses_for_user(user=user)
    )
    zones = list(
        businesses.order_by().values_list("time_zone", flat=True).distinct()[:2]
    )
    return zoneinfo.ZoneInfo(zones[0]) if len(zones) == 1 else None


def member_get(*, business: Business, member_id: int) -> Member:
    """A member of this business; another business's member is not found."""
    member = Member.objects.filter(business=business, pk=member_id).first()
    if member is None:
        raise NotFound(_("No such member."), code="member_not_found")
    return member
