"""The built-in ``classes`` integration: the schedule and members' bookings."""

from __future__ import annotations

import datetime
from typing import Any

from django.utils import timezone

from gymnasia.classes.models import Booking, ClassSession
from gymnasia.classes.selectors import bookings_upcoming, class_sessions_between
from gymnasia.classes.services import booking_cancel, booking_create
from gymnasia.gyms.models import Member
from tools.integrations.builtin import BuiltinClient


class ClassesClient(BuiltinClient):
    kind = "classes"
    writes = frozenset({"book", "cancel"})

    def _local(self, moment: datetime.datetime) -> str:
        return timezone.localtime(moment, self.business.zone).isoformat(
            timespec="minutes"
        )

    def _session(self, session: ClassSession) -> dict[str, Any]:
        return {
            "session_id": session.pk,
            "class": session.class_type.name,
            "starts_at": self._local(session.starts_at),
            "ends_at": self._local(session.ends_at),
            "instructor": session.instructor,
            "room": session.room,
        }

    def _booking(self, booking: Booking) -> dict[str, Any]:
        return {
            "booking_id": booking.pk,
            "status": booking.status,
            **self._session(booking.session),
        }

    def list_sessions(
        self,
        *,
        date_from: datetime.date,
        date_to: datetime.date,
        class_type: str | None,
        member: Member | None = None,
    ) -> list[dict[str, Any]]:
        """The sessions of those days; for a member, whether each is one of hers."""
        sessions = self._read(
            lambda: list(
                class_sessions_between(
                    business=self.business,
                    date_from=date_from,
                    date_to=date_to,
                    class_type=class_type,
                    member=member,
                )
            )
        )
        listed = []
        for s in sessions:
            session = {
                **self._session(s),
                "capacity": s.capacity,
                "places_left": max(s.capacity - s.booked, 0),  # type: ignore[attr-defined]
            }
            if member is not None:
                session["member_booked"] = s.member_booked  # type: ignore[attr-defined]
            listed.append(session)
        return listed

    def list_bookings(self, *, member: Member) -> list[dict[str, Any]]:
        bookings = self._read(
            lambda: list(bookings_upcoming(business=self.business, member=member))
        )
        return [self._booking(b) for b in bookings]

    def book(self, *, member: Member, session_id: int) -> dict[str, Any]:
        booking = self._write(
            lambda: booking_create(
                business=self.business, member=member, session_id=session_id
            )
        )
        return self._booking(booking)

    def cancel(self, *, member: Member, booking_id: int) -> dict[str, Any]:
        booking = self._write(
            lambda: booking_cancel(
                business=self.business, member=member, booking_id=booking_id
            )
        )
        return self._booking(booking)

    def find_booking(self, *, member: Member, booking_id: int) -> dict[str, Any] | None:
        booking = self._read(
            lambda: (
                Booking.objects.select_related("session__class_type")
                .filter(business=self.business, member=member, pk=booking_id)
                .first()
            )
        )
        return self._booking(booking) if booking is not None else None
