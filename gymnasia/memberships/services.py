"""Changes to memberships: creating them and freezing them."""

from __future__ import annotations

import datetime

from django.db import transaction
from django.utils.translation import gettext as _

from gymnasia.errors import Conflict, InvalidValue, NotFound
from gymnasia.gyms.models import Business, Member
from gymnasia.gyms.selectors import business_today
from gymnasia.memberships.models import Membership, MembershipFreeze

MAX_FREEZE_DAYS = 90


def membership_create(
    *,
    business: Business,
    member: Member,
    plan: str,
    starts_on: datetime.date,
    ends_on: datetime.date,
) -> Membership:
    """Give a member a plan between two dates."""
    if member.business_id != business.pk:
        raise NotFound(_("No such member."), field="member")
    if ends_on < starts_on:
        raise InvalidValue(
            _("A membership cannot end before it starts."), field="ends_on"
        )
    return Membership.objects.create(
        business=business,
        member=member,
        plan=plan,
        starts_on=starts_on,
        ends_on=ends_on,
    )


def membership_freeze(
    *,
    business: Business,
    member: Member,
    start: datetime.date,
    end: datetime.date,
    max_days: int = MAX_FREEZE_DAYS,
) -> MembershipFreeze:
    """Pause the member's current membership from ``start`` to ``end`` (both included).

    The membership's end moves later by the frozen days, as members expect from a
    freeze. Refused when the period is in the past, backwards, too long, after the
    membership ends, or overlaps another freeze.
    """
    if member.business_id != business.pk:
        raise NotFound(_("No such member."), field="member")
    if end < start:
        raise InvalidValue(_("The freeze cannot end before it starts."), field="end")
    if start < business_today(business=business):
        raise InvalidValue(_("A freeze cannot start in the past."), field="start")
    days = (end - start).days + 1
    if days > max_days:
        raise InvalidValue(
            _("A freeze can last at most %(max)s days.") % {"max": max_days},
            field="end",
        )
    with transaction.atomic():
        membership = (
            Membership.objects.select_for_update()
            .filter(business=business, member=member)
            .exclude(status=Membership.Status.CANCELLED)
            .order_by("-ends_on", "-pk")
            .first()
        )
        if membership is None:
            raise NotFound(_("This member has no membership that can be frozen."))
        if start > membership.ends_on:
            raise InvalidValue(
                _("The freeze starts after the membership ends (%(ends)s).")
                % {"ends": membership.ends_on.isoformat()},
                field="start",
            )
        overlapping = membership.freezes.filter(start__lte=end, end__gte=start).first()
        if overlapping is not None:
            raise Conflict(
                _("It overlaps the freeze from %(start)s to %(end)s.")
                % {
                    "start": overlapping.start.isoformat(),
                    "end": overlapping.end.isoformat(),
                }
            )
        freeze = MembershipFreeze.objects.create(
            business=business, membership=membership, start=start, end=end
        )
        membership.ends_on = membership.ends_on + datetime.timedelta(days=days)
        membership.save(update_fields=["ends_on"])
    return freeze
