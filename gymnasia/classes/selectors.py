"""Reads of the class schedule and of bookings."""

from __future__ import annotations

import datetime

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from gymnasia.classes.models import Booking, ClassSession
from gymnasia.gyms.models import Business, Member


def class_sessions_between(
    *,
    business: Business,
    date_from: datetime.date,
    date_to: datetime.date,
    class_type: str | None = None,
    member: Member | None = None,
) -> QuerySet[ClassSession]:
    """Sessions of those days (gym's time zone) that have not started yet, with
    ``booked`` places: one already under way can no longer be booked, so it is not
    offered as if it could. With a ``member``, each also says whether that member
    holds one of its places (``member_booked``)."""
    zone = business.zone
    start = datetime.datetime.combine(date_from, datetime.time.min, tzinfo=zone)
    days = Q(starts_at__gte=max(start, timezone.now()))
    if date_to < datetime.date.max:  # the last day a date can name has no next
        end = datetime.datetime.combine(
            date_to + datetime.timedelta(days=1), datetime.time.min, tzinfo=zone
        )
        days &= Q(starts_at__lt=end)
    qs = (
        ClassSession.objects.filter(days, business=business, is_cancelled=False)
        .select_related("class_type")
        .annotate(
            booked=Count(
                "bookings", filter=Q(bookings__status=Booking.Status.CONFIRMED)
            )
        )
        .order_by("starts_at", "pk")
    )
    if class_type:
        qs = qs.filter(class_type__name__icontains=class_type)
    if member is not None:
        qs = qs.annotate(
            member_booked=Exists(
                Booking.objects.filter(
                    session=OuterRef("pk"),
                    member=member,
                    status=Booking.Status.CONFIRMED,
                )
            )
        )
    return qs


def bookings_upcoming(*, business: Business, member: Member) -> QuerySet[Booking]:
    """The member's confirmed bookings of sessions not yet started."""
    return (
        Booking.objects.filter(
            business=business,
            member=member,
            status=Booking.Status.CONFIRMED,
            session__starts_at__gt=timezone.now(),
        )
        .select_related("session__class_type")
        .order_by("session__starts_at")
    )


def class_sessions_with_places(
    *, business: Business, class_type_id: int, including: int | None = None
) -> QuerySet[ClassSession]:
    """The sessions of a class type at a gym that have not started and still have
    a free place, soonest first; ``including`` a session that is listed whatever
    its places (the one a request named, which a correction may keep)."""
    has_room = Q(
        is_cancelled=False, starts_at__gt=timezone.now(), booked__lt=F("capacity")
    )
    return (
        ClassSession.objects.filter(business=business, class_type_id=class_type_id)
        .annotate(
            booked=Count(
                "bookings", filter=Q(bookings__status=Booking.Status.CONFIRMED)
            )
        )
        .filter(has_room | Q(pk=including or 0))
        .select_related("class_type")
        .order_by("starts_at", "pk")
    )
