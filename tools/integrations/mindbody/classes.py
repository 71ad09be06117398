"""The ``classes`` kind served by the gym's Mindbody site: its schedule and the
member's bookings (Mindbody's classes and the client's visits).

Mindbody takes no idempotency key, so a booking is never sent again blind (R6):
when its answer is lost, and before it is ever sent again, the class's roster is
read back. Found: it was made. Not found after a lost answer: nobody knows
(``OutcomeUnknown``, which a person takes, R9). A session is Mindbody's class id,
a booking the client's visit id, both passed back as the reads gave them.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from gymnasia.errors import NotFound
from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from tools.integrations.errors import IntegrationError, OutcomeUnknown
from tools.integrations.mindbody.identity import MindbodyKind

#: How far ahead a member's bookings are read.
BOOKINGS_AHEAD_DAYS = 366


def _name(staff: Any) -> str:
    if not isinstance(staff, dict):
        return ""
    full = f"{staff.get('FirstName') or ''} {staff.get('LastName') or ''}".strip()
    return str(staff.get("DisplayName") or staff.get("Name") or full)


class MindbodyClasses(MindbodyKind):
    kind = "classes"
    writes = frozenset({"book", "cancel"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sent: set[tuple[str, int]] = set()
        self._removed: dict[int, dict[str, Any]] = {}

    def _moment(self, value: Any) -> datetime.datetime | None:
        """A Mindbody time: with its offset as given, else the site's local time."""
        moment = parse_datetime(value) if isinstance(value, str) else None
        if moment is not None and timezone.is_naive(moment):
            moment = timezone.make_aware(moment, self.business.zone)
        return moment

    def _local(self, value: Any) -> str:
        moment = self._moment(value)
        if moment is None:
            return ""
        return timezone.localtime(moment, self.business.zone).isoformat(
            timespec="minutes"
        )

    def _session(self, found: dict[str, Any]) -> dict[str, Any]:
        description = found.get("ClassDescription") or {}
        place = found.get("Resource") or found.get("Location") or {}
        return {
            "session_id": int(found["Id"]),
            "class": str(description.get("Name") or found.get("Name") or ""),
            "starts_at": self._local(found.get("StartDateTime")),
            "ends_at": self._local(found.get("EndDateTime")),
            "instructor": _name(found.get("Staff")),
            "room": str(place.get("Name") or "") if isinstance(place, dict) else "",
        }

    def _booking(self, visit: dict[str, Any], status: str = "") -> dict[str, Any]:
        return {
            "booking_id": int(visit["Id"]),
            "status": status
            or ("cancelled" if visit.get("LateCancelled") else "confirmed"),
            "session_id": int(visit.get("ClassId") or 0),
            "class": str(visit.get("Name") or ""),
            "starts_at": self._local(visit.get("StartDateTime")),
            "ends_at": self._local(visit.get("EndDateTime")),
            "instructor": "",
            "room": "",
        }

    def list_sessions(
        self,
        *,
        date_from: datetime.date,
        date_to: datetime.date,
        class_type: str | None,
        member: Member | None = None,
    ) -> list[dict[str, Any]]:
        """The classes of those days not started yet; for a member, whether she
        is booked into each (Mindbody's ``IsEnrolled`` for her client id)."""
        params: dict[str, Any] = {
            "request.startDateTime": f"{date_from.isoformat()}T00:00:00",
            "request.endDateTime": f"{date_to.isoformat()}T23:59:59",
            "request.hideCanceledClasses": "true",
        }
        client = None
        if member is not None:
            try:
                client = self.client_id(member)
            except NotFound:
                client = None
            else:
                params["request.clientId"] = client
        now = timezone.now()
        wanted = (class_type or "").strip().lower()
        listed = []
        for found in self.api.pages("/class/classes", "Classes", params):
            start = self._moment(found.get("StartDateTime"))
            session = self._session(found)
            if found.get("IsCanceled") or start is None or start <= now:
                continue
            if wanted and wanted not in session["class"].lower():
                continue
            capacity = int(found.get("MaxCapacity") or 0)
            session["capacity"] = capacity
            session["places_left"] = max(
                capacity - int(found.get("TotalBooked") or 0), 0
            )
            if member is not None:
                session["member_booked"] = bool(client and found.get("IsEnrolled"))
            listed.append(session)
        return sorted(listed, key=lambda s: (s["starts_at"], s["session_id"]))

    def find_session(self, *, session_id: int) -> dict[str, Any] | None:
        """One class as Mindbody has it now (from today on), or ``None``."""
        today = business_today(business=self.business)
        ahead = today + datetime.timedelta(days=BOOKINGS_AHEAD_DAYS)
        params = {
            "request.classIds": session_id,
            "request.startDateTime": f"{today.isoformat()}T00:00:00",
            "request.endDateTime": f"{ahead.isoformat()}T23:59:59",
        }
        for found in self.api.pages("/class/classes", "Classes", params):
            if int(found.get("Id") or 0) == session_id:
                return self._session(found)
        return None

    def _visits(self, client: str) -> list[dict[str, Any]]:
        """The client's visits from yesterday on (classes only)."""
        today = business_today(business=self.business)
        params = {
            "request.clientId": client,
            "request.startDate": (today - datetime.timedelta(days=1)).isoformat(),
            "request.endDate": (
                today + datetime.timedelta(days=BOOKINGS_AHEAD_DAYS)
            ).isoformat(),
        }
        return [
            v
            for v in self.api.pages("/client/clientvisits", "Visits", params)
            if v.get("Id")
            and v.get("ClassId")
            and str(v.get("ClientId") or client) == client
        ]

    def list_bookings(self, *, member: Member) -> list[dict[str, Any]]:
        now = timezone.now()
        bookings = []
        for visit in self._visits(self.client_id(member)):
            start = self._moment(visit.get("StartDateTime"))
            if visit.get("LateCancelled") or start is None or start < now:
                continue
            bookings.append(self._booking(visit))
        return sorted(bookings, key=lambda b: (b["starts_at"], b["booking_id"]))

    def _on_roster(self, client: str, session_id: int) -> dict[str, Any] | None:
        """The client's visit in the class's roster, read now, or ``None``."""
        found = self.api.send(
            "GET", "/class/classvisits", params={"request.classID": session_id}
        )
        roster = found.get("Class") or {}
        for visit in roster.get("Visits") or []:
            if str(visit.get("ClientId")) == client and not visit.get("LateCancelled"):
                return {"ClassId": session_id, **visit}
        return None

    def _read_back(
        self, read: Callable[[], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        """A read after a write whose answer was lost: when it cannot be read
        either, nobody knows what the write did."""
        try:
            return read()
        except IntegrationError:
            raise OutcomeUnknown("the change could not be read back") from None

    def book(self, *, member: Member, session_id: int) -> dict[str, Any]:
        client = self.client_id(member)
        if (client, session_id) in self._sent:  # sent before: is it there?
            already = self._on_roster(client, session_id)
            if already is not None:
                return self._booking(already)
        body = {
            "ClientId": client,
            "ClassId": session_id,
            "RequirePayment": True,
            "Waitlist": False,
            "SendEmail": False,
            "Test": self.rehearsing,
        }
        if not self.rehearsing:
            self._sent.add((client, session_id))
        try:
            made = self.api.send(
                "POST", "/class/addclienttoclass", body=body, write=True
            )
        except OutcomeUnknown:
            arrived = self._read_back(lambda: self._on_roster(client, session_id))
            if arrived is None:
                raise
            return self._booking(arrived)
        if self.rehearsing:
            return {"booking_id": None, "status": "confirmed", "session_id": session_id}
        visit = made.get("Visit")
        if not isinstance(visit, dict) or not visit.get("Id"):
            visit = self._on_roster(client, session_id)
            if visit is None:
                raise OutcomeUnknown("Mindbody's answer named no booking")
        return self._booking({"ClassId": session_id, **visit})

    def _visit(self, client: str, booking_id: int) -> dict[str, Any] | None:
        for visit in self._visits(client):
            if int(visit["Id"]) == booking_id:
                return visit
        return None

    def cancel(self, *, member: Member, booking_id: int) -> dict[str, Any]:
        client = self.client_id(member)
        visit = self._visit(client, booking_id)
        if visit is None or visit.get("LateCancelled"):
            raise NotFound(
                _("No booking with that id for this member."),
                field="booking_id",
                code="booking_not_found",
            )
        body = {
            "ClientId": client,
            "ClassId": int(visit["ClassId"]),
            "LateCancel": False,
            "SendEmail": False,
            "Test": self.rehearsing,
        }
        try:
            self.api.send("POST", "/class/removeclientfromclass", body=body, write=True)
        except OutcomeUnknown:
            if self._read_back(lambda: self._visit(client, booking_id)) is not None:
                raise
        cancelled = self._booking(visit, status="cancelled")
        if not self.rehearsing:
            self._removed[booking_id] = cancelled
        return cancelled

    def find_booking(self, *, member: Member, booking_id: int) -> dict[str, Any] | None:
        """The member's booking as Mindbody has it now; one this client removed
        and that is gone from her visits is found cancelled."""
        visit = self._visit(self.client_id(member), booking_id)
        if visit is not None:
            return self._booking(visit)
        return self._removed.get(booking_id)
