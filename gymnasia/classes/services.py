"""Changes to the class schedule's bookings."""

from __future__ import annotations

import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from gymnasia.classes.models import Booking, ClassSession, ClassType
from gymnasia.errors import Conflict, InvalidValue, NotFound
from gymnasia.gyms.models import Business, Member
from gymnasia.memberships.selectors import membership_current, membership_state_on


def class_session_schedule(
    *,
    business: Business,
    class_type: ClassType,
    starts_at: datetime.datetime,
    ends_at: datetime.datetime,
    capacity: int,
    instructor: str = "",
    room: str = "",
) -> tuple[ClassSession, bool]:
    """Put a session on the schedule; the same slot twice is the same session."""
    if class_type.business_id != business.pk:
        raise NotFound(_("No such class type."), field="class_type")
    if ends_at <= starts_at:
        raise InvalidValue(
            _("A class must end after it starts."),
            field="ends_at",
            code="end_before_start",
        )
    if capacity <= 0:
        raise InvalidValue(
            _("A class needs room for at least one member."),
            field="capacity",
            code="at_least",
            params={"limit": 1},
        )
    return ClassSession.objects.get_or_create(
        business=business,
        class_type=class_type,
        starts_at=starts_at,
        room=room,
        defaults={"ends_at": ends_at, "capacity": capacity, "instructor": instructor},
    )


def booking_create(*, business: Business, member: Member, session_id: int) -> Booking:
    """Book the member a place in a future session that has room.

    The session row is locked while places are counted, so two members racing for
    the last place cannot both get it.
    """
    if member.business_id != business.pk:
        raise NotFound(_("No such member."), field="member", code="member_not_found")
    with transaction.atomic():
        session = (
            ClassSession.objects.select_for_update()
            .filter(business=business, pk=session_id)
            .select_related("class_type")
            .first()
        )
        if session is None:
            raise NotFound(
                _("No class session with that id."),
                field="session_id",
                code="class_not_found",
            )
        if session.is_cancelled:
            raise InvalidValue(
                _("This class has been cancelled."),
                field="session_id",
                code="class_cancelled",
            )
        if session.starts_at <= timezone.now():
            raise InvalidValue(
                _("This class has already started."),
                field="session_id",
                code="class_started",
            )
        membership = membership_current(business=business, member=member)
        day = timezone.localtime(session.starts_at, business.zone).date()
        if (
            membership is None
            or membership_state_on(membership=membership, day=day) != "active"
        ):
            raise InvalidValue(
                _("The member has no active membership on the day of the class."),
                field="session_id",
                code="no_membership_on_class_day",
            )
        confirmed = Booking.objects.filter(
            session=session, status=Booking.Status.CONFIRMED
        )
        if confirmed.filter(member=member).exists():
            raise Conflict(
                _("The member is already booked into this class."),
                code="already_booked",
            )
        if confirmed.count() >= session.capacity:
            raise Conflict(_("This class is full."), code="class_full")
        try:
            with transaction.atomic():
                return Booking.objects.create(
                    business=business, member=member, session=session
                )
        except IntegrityError:
            raise Conflict(
                _("The member is already booked into this class."),
                code="already_booked",
            ) from None


def booking_cancel(*, business: Business, member: Member, booking_id: int) -> Booking:
    """Cancel one of the member's bookings before its class starts.

    Cancelling a booking that is already cancelled changes nothing.
    """
    if member.business_id != business.pk:
        raise NotFound(_("No such member."), field="member", code="member_not_found")
    with transaction.atomic():
        booking = (
            Booking.objects.select_for_update()
            .filter(business=business, member=member, pk=booking_id)
            .select_related("session")
            .first()
        )
        if booking is None:
            raise NotFound(
                _("No booking with that id for this member."),
                field="booking_id",
                code="booking_not_found",
            )
        if booking.status == Booking.Status.CANCELLED:
            return booking
        if booking.session.starts_at <= timezone.now():
            raise InvalidValue(
                _("A class that has started cannot be cancelled."),
                code="started_class_not_cancelled",
            )
        booking.status = Booking.Status.CANCELLED
        booking.cancelled_at = timezone.now()
        booking.save(update_fields=["status", "cancelled_at"])
    return booking
