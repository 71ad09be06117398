"""The fake Mindbody's class endpoints: the schedule, a class's roster, and
booking a client into a class or out of it.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tests.fakes.mindbody_data import (
    ClassRecord,
    Client,
    WaitlistEntry,
    added_visit_json,
    class_json,
    visit_json,
)
from tests.fakes.mindbody_wire import (
    PAGING,
    Refusal,
    Request,
    Response,
    bool_param,
    check_names,
    datetime_param,
    error,
    int_list,
    int_param,
    invalid,
    json_body,
    ok,
    page,
    single,
)

if TYPE_CHECKING:
    from tests.fakes.mindbody_server import MindbodyFake


class ClassEndpoints:
    """Mixed into :class:`MindbodyFake`: ``/class/...``."""

    def _class_or_refuse(self: MindbodyFake, class_id: int | None) -> ClassRecord:
        record = self.classes.get(class_id) if class_id is not None else None
        if record is None:
            raise Refusal(error(400, "InvalidClassId", f"Class {class_id} not found."))
        return record

    def _client_or_refuse(self: MindbodyFake, client_id: str | None) -> Client:
        client = self.clients.get(client_id) if client_id else None
        if client is None:
            raise Refusal(
                error(400, "ClientNotFound", f"Client {client_id} not found.")
            )
        return client

    def _booked(self: MindbodyFake, class_id: int) -> list:
        return [
            visit
            for visit in self.visits
            if visit.class_id == class_id and not visit.late_cancelled
        ]

    def _waiting(self: MindbodyFake, class_id: int) -> int:
        return sum(1 for entry in self.waitlist if entry.class_id == class_id)

    def _class_out(
        self: MindbodyFake, record: ClassRecord, *, visits: bool = False, client=None
    ) -> dict[str, Any]:
        wire = self._wire()
        booked = self._booked(record.id)
        roster = None
        if visits:
            roster = [
                visit_json(visit, record, wire)
                for visit in self.visits
                if visit.class_id == record.id
            ]
        return class_json(
            record,
            wire,
            booked=booked,
            waiting=self._waiting(record.id),
            visits=roster,
            enrolled=client is not None
            and any(visit.client_id == client for visit in booked),
        )

    def _classes(self: MindbodyFake, request: Request) -> Response:
        """``GET /class/classes`` filtered as documented, one page of them.

        ``request.startDateTime`` and ``request.endDateTime`` compare by date
        only (the class's site-local day), as the document notes for both: a
        class earlier on the start day is listed. Both default to today at the
        site.
        """
        query = request.query
        check_names(
            query,
            PAGING
            | {
                "request.classDescriptionIds",
                "request.classIds",
                "request.classScheduleIds",
                "request.clientId",
                "request.endDateTime",
                "request.hideCanceledClasses",
                "request.lastModifiedDate",
                "request.locationIds",
                "request.programIds",
                "request.schedulingWindow",
                "request.semesterIds",
                "request.sessionTypeIds",
                "request.staffIds",
                "request.startDateTime",
                "request.uniqueClientId",
            },
        )
        zone = self.zone
        today = datetime.now(zone)
        start = datetime_param(query, "request.startDateTime", zone) or today
        end = datetime_param(query, "request.endDateTime", zone) or today
        first_day = start.astimezone(zone).date()
        last_day = end.astimezone(zone).date()
        class_ids = set(int_list(query, "request.classIds"))
        description_ids = set(int_list(query, "request.classDescriptionIds"))
        schedule_ids = set(int_list(query, "request.classScheduleIds"))
        location_ids = set(int_list(query, "request.locationIds"))
        staff_ids = set(int_list(query, "request.staffIds"))
        hide_canceled = bool_param(query, "request.hideCanceledClasses") or False
        client_id = single(query, "request.clientId")
        int_param(query, "request.uniqueClientId")
        chosen = page(query)
        with self._lock:
            found = [
                record
                for record in sorted(
                    self.classes.values(), key=lambda r: (r.start, r.id)
                )
                if first_day <= record.start.astimezone(zone).date() <= last_day
                and (not class_ids or record.id in class_ids)
                and (not description_ids or record.description_id in description_ids)
                and (not schedule_ids or record.schedule_id in schedule_ids)
                and (not location_ids or record.location_id in location_ids)
                and (not staff_ids or record.staff.id in staff_ids)
                and not (hide_canceled and record.canceled)
            ]
            items, pagination = chosen.cut(found)
            classes = [self._class_out(record, client=client_id) for record in items]
        return ok({"PaginationResponse": pagination, "Classes": classes})

    def _class_visits(self: MindbodyFake, request: Request) -> Response:
        """``GET /class/classvisits``: the class with its ``Visits`` (roster)."""
        check_names(
            request.query,
            {
                "request.classID",
                "request.lastModifiedDate",
                "request.useSiteSettingsStaffName",
            },
        )
        class_id = int_param(request.query, "request.classID")
        if class_id is None:
            raise invalid("request.classID is required.")
        with self._lock:
            record = self._class_or_refuse(class_id)
            return ok({"Class": self._class_out(record, visits=True)})

    def _add_client_to_class(self: MindbodyFake, request: Request) -> Response:
        """``POST /class/addclienttoclass``: book, or answer why not."""
        body = json_body(
            request,
            {
                "ClientId": str,
                "ClassId": int,
                "Test": bool,
                "RequirePayment": bool,
                "Waitlist": bool,
                "SendEmail": bool,
                "WaitlistEntryId": int,
                "ClientServiceId": int,
                "CrossRegionalBooking": bool,
                "CrossRegionalBookingClientServiceSiteId": int,
                "UniqueId": int,
            },
        )
        if body.get("ClassId") is None or not body.get("ClientId"):
            raise invalid("ClientId and ClassId are required.")
        with self._lock:
            record = self._class_or_refuse(body["ClassId"])
            if record.canceled:
                raise Refusal(
                    error(400, "InvalidClassId", f"Class {record.id} is cancelled.")
                )
            client = self._client_or_refuse(body["ClientId"])
            booked = self._booked(record.id)
            if any(visit.client_id == client.id for visit in booked):
                raise Refusal(
                    error(
                        400,
                        "ClientIsAlreadyBooked",
                        f"Client {client.id} is already booked into class {record.id}.",
                    )
                )
            if any(
                entry.class_id == record.id and entry.client_id == client.id
                for entry in self.waitlist
            ):
                raise Refusal(
                    error(
                        400,
                        "ClientIsAlreadyOnWaitlist",
                        f"Client {client.id} is on the waiting list of class {record.id}.",
                    )
                )
            wire = self._wire()
            if len(booked) >= record.capacity:
                if body.get("Waitlist") and record.waitlist_size > self._waiting(
                    record.id
                ):
                    return self._join_waitlist(record, client, body)
                raise Refusal(
                    error(400, "ClassSignUpsFull", f"Class {record.id} is full.")
                )
            service = self._paying_service(client, body)
            if body.get("Test"):
                visit_out = added_visit_json(None, record, client.id, wire)
                return ok({"Visit": visit_out})
            if service is not None:
                service.remaining -= 1
            visit = self._book(record, client, service)
            return ok({"Visit": added_visit_json(visit, record, client.id, wire)})

    def _paying_service(self: MindbodyFake, client: Client, body: dict):
        """The pricing option paying the booking, None when none is needed."""
        usable = [
            service
            for service in self.services
            if service.client_id == client.id and service.remaining > 0
        ]
        wanted = body.get("ClientServiceId")
        if wanted is not None:
            usable = [service for service in usable if service.id == wanted]
        if usable:
            return usable[0]
        if body.get("RequirePayment"):
            raise Refusal(
                error(
                    400,
                    "ClassRequiresPayment",
                    f"Client {client.id} has no pricing option to pay for this class.",
                )
            )
        return None

    def _join_waitlist(self: MindbodyFake, record, client, body) -> Response:
        entry_id = 0
        if not body.get("Test"):
            entry = WaitlistEntry(self._next_id(), record.id, client.id)
            self.waitlist.append(entry)
            entry_id = entry.id
        visit_out = added_visit_json(
            None, record, client.id, self._wire(), waitlist_entry=entry_id
        )
        return ok({"Visit": visit_out})

    def _remove_client_from_class(self: MindbodyFake, request: Request) -> Response:
        """``POST /class/removeclientfromclass``: early or late cancel."""
        body = json_body(
            request,
            {
                "ClientId": str,
                "UniqueClientId": int,
                "ClassId": int,
                "Test": bool,
                "SendEmail": bool,
                "LateCancel": bool,
                "VisitId": int,
            },
        )
        if body.get("ClassId") is None or not (
            body.get("ClientId") or body.get("UniqueClientId")
        ):
            raise invalid("ClassId and ClientId are required.")
        with self._lock:
            record = self._class_or_refuse(body["ClassId"])
            client_id = body.get("ClientId")
            if body.get("UniqueClientId"):
                client_id = next(
                    (
                        client.id
                        for client in self.clients.values()
                        if client.unique_id == body["UniqueClientId"]
                    ),
                    None,
                )
            client = self._client_or_refuse(client_id)
            visit = next(
                (v for v in self._booked(record.id) if v.client_id == client.id), None
            )
            if visit is None or (body.get("VisitId") not in (None, 0, visit.id)):
                raise invalid(
                    f"Client {client.id} is not booked into class {record.id}."
                )
            if not body.get("Test"):
                if body.get("LateCancel"):
                    visit.late_cancelled = True
                    visit.modified = datetime.now(UTC)
                else:
                    self.visits.remove(visit)
                    if visit.service is not None:
                        visit.service.remaining += 1
            return ok({"Class": self._class_out(record)})
