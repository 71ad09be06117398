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
        raise NotFound(_("No such member."), field="member", code="member_not_found")
    if ends_on < starts_on:
        raise InvalidValue(
            _("A membership cannot end before it starts."),
            field="ends_on",
            code="end_before_start",
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
        raise NotFound(_("No such member."), field="member", code="member_not_found")
    if end < start:
        raise InvalidValue(
            _("The freeze cannot end before it starts."),
            field="end",
            code="end_before_start",
        )
    if start < business_today(business=business):
        raise InvalidValue(
            _("A freeze cannot start in the past."), field="start", code="in_the_past"
        )
    days = (end - start).days + 1
    if days > max_days:
        raise InvalidValue(
            _("A freeze can last at most %(max)s days.") % {"max": max_days},
            field="end",
            code="freeze_too_long",
            params={"max": max_days},
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
            raise NotFound(
                _("This member has no membership that can be frozen."),
                code="no_membership_to_freeze",
            )
        if start > membership.ends_on:
            raise InvalidValue(
                _("The freeze starts after the membership ends (%(ends)s).")
                % {"ends": membership.ends_on.isoformat()},
                field="start",
                code="freeze_after_membership_ends",
                params={"ends": membership.ends_on.isoformat()},
            )
        overlapping = membership.freezes.filter(start__lte=end, end__gte=start).first()
        if overlapping is not None:
            days_taken = {
                "start": overlapping.start.isoformat(),
                "end": overlapping.end.isoformat(),
            }
            raise Conflict(
                _("It overlaps the freeze from %(start)s to %(end)s.") % days_taken,
                code="freeze_overlaps",
                params=days_taken,
            )
        freeze = MembershipFreeze.objects.create(
            business=business, membership=membership, start=start, end=end
        )
        membership.ends_on = membership.ends_on + datetime.timedelta(days=days)
        membership.save(update_fields=["ends_on"])
    return freeze
