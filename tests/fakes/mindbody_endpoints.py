"""The fake Mindbody's endpoints: one method per path of the v6 document that
Gymnasia uses, reading and changing the state :class:`MindbodyFake` keeps.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import TYPE_CHECKING, Any

from tests.fakes.mindbody_data import (
    ClassRecord,
    Client,
    WaitlistEntry,
    added_visit_json,
    class_json,
    client_json,
    contract_json,
    membership_json,
    service_json,
    visit_json,
)
from tests.fakes.mindbody_wire import (
    Refusal,
    Request,
    Response,
    bool_param,
    check_names,
    datetime_param,
    end_of_day,
    error,
    int_list,
    int_param,
    invalid,
    json_response,
    page,
    single,
)

if TYPE_CHECKING:
    from tests.fakes.mindbody_server import MindbodyFake

# path -> (method, handler, token): "required", "optional" (checked when sent)
# or "ignored".
ROUTES: dict[str, tuple[str, str, str]] = {
    "/usertoken/issue": ("POST", "_issue", "ignored"),
    "/site/sites": ("GET", "_sites", "optional"),
    "/class/classes": ("GET", "_classes", "optional"),
    "/class/classvisits": ("GET", "_class_visits", "required"),
    "/class/addclienttoclass": ("POST", "_add_client_to_class", "required"),
    "/class/removeclientfromclass": ("POST", "_remove_client_from_class", "required"),
    "/client/clients": ("GET", "_clients", "required"),
    "/client/clientvisits": ("GET", "_client_visits", "required"),
    "/client/clientcontracts": ("GET", "_client_contracts", "required"),
    "/client/activeclientmemberships": ("GET", "_memberships", "required"),
    "/client/clientservices": ("GET", "_client_services", "required"),
    "/client/suspendcontract": ("POST", "_suspend_contract", "required"),
}

_PAGING = frozenset({"request.limit", "request.offset"})


def _body(request: Request, types: dict[str, type | tuple[type, ...]]) -> dict:
    """The JSON object body, every field known and of its documented type."""
    if request.body_error is not None:
        raise invalid(request.body_error)
    body = request.body
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object.")
    for name, value in body.items():
        expected = types.get(name)
        if expected is None:
            raise invalid(f"The field '{name}' is not accepted here.")
        if value is None:
            continue
        wrong_bool = isinstance(value, bool) and bool not in _as_tuple(expected)
        if wrong_bool or not isinstance(value, expected):
            raise invalid(f"The value of '{name}' is not valid.")
    return body


def _as_tuple(expected: type | tuple[type, ...]) -> tuple[type, ...]:
    return expected if isinstance(expected, tuple) else (expected,)


def _ok(payload: dict[str, Any]) -> Response:
    return json_response(200, payload)


class Endpoints:
    """Mixed into :class:`MindbodyFake`; every method runs under its lock."""

    # -------------------------------------------------------------- user token

    def _issue(self: MindbodyFake, request: Request) -> Response:
        """``POST /usertoken/issue`` with the staff user's name and password."""
        body = _body(request, {"Username": str, "Password": str})
        if not body.get("Username") or not body.get("Password"):
            raise invalid("Username and Password are required.")
        same_user = body["Username"] == self.staff_username
        if not same_user or body["Password"] != self.staff_password:
            raise Refusal(
                error(401, "InvalidLoginCredentials", "Invalid staff credentials.")
            )
        token, expires = self._issue_token()
        moment = datetime.fromtimestamp(expires, UTC).replace(microsecond=0)
        written = moment.replace(tzinfo=None).isoformat()
        return _ok(
            {
                "TokenType": "Bearer",
                "AccessToken": token,
                "Expires": written + ("Z" if self.datetime_style == "utc" else ""),
                "User": {
                    "Id": 100000001,
                    "FirstName": "Gym",
                    "LastName": "Owner",
                    "Type": "Staff",
                },
            }
        )

    # -------------------------------------------------------------------- site

    def _sites(self: MindbodyFake, request: Request) -> Response:
        """``GET /site/sites``: the one site this key is activated for."""
        check_names(
            request.query,
            _PAGING
            | {
                "request.includeLeadChannels",
                "request.includePerStaffPricing",
                "request.siteIds",
            },
        )
        wanted = int_list(request.query, "request.siteIds")
        chosen = page(request.query)
        site = {
            "Id": int(self.site_id),
            "Name": "Gymnasia Test Studio",
            "Description": "A fake Mindbody site.",
            "ContactEmail": "studio@example.com",
            "TimeZone": self.time_zone,
            "CurrencyIsoCode": "EUR",
            "CountryCode": "ES",
            "AcceptsVisa": True,
            "AcceptsMasterCard": True,
            "AcceptsAmericanExpress": False,
            "AcceptsDiscover": False,
            "AcceptsDirectDebit": False,
            "AllowsDashboardAccess": False,
            "PricingLevel": "Accelerate",
            "SmsPackageEnabled": False,
            "TaxInclusivePrices": True,
            "LogoUrl": None,
            "PageColor1": "#000000",
            "PageColor2": "#ffffff",
            "PageColor3": "#000000",
            "PageColor4": "#ffffff",
        }
        sites = [site] if not wanted or int(self.site_id) in wanted else []
        items, pagination = chosen.cut(sites)
        return _ok({"PaginationResponse": pagination, "Sites": items})

    # ----------------------------------------------------------------- classes

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

        ``request.startDateTime`` compares with the start time; the end
        date-time compares by date only (the class's site-local day), as the
        document notes. Both default to today at the site.
        """
        query = request.query
        check_names(
            query,
            _PAGING
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
        today = datetime.combine(datetime.now(zone).date(), time(), tzinfo=zone)
        start = datetime_param(query, "request.startDateTime", zone) or today
        end = end_of_day(
            datetime_param(query, "request.endDateTime", zone) or today, zone
        )
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
                if start <= record.start <= end
                and (not class_ids or record.id in class_ids)
                and (not description_ids or record.description_id in description_ids)
                and (not schedule_ids or record.schedule_id in schedule_ids)
                and (not location_ids or record.location_id in location_ids)
                and (not staff_ids or record.staff.id in staff_ids)
                and not (hide_canceled and record.canceled)
            ]
            items, pagination = chosen.cut(found)
            classes = [self._class_out(record, client=client_id) for record in items]
        return _ok({"PaginationResponse": pagination, "Classes": classes})

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
            return _ok({"Class": self._class_out(record, visits=True)})

    def _add_client_to_class(self: MindbodyFake, request: Request) -> Response:
        """``POST /class/addclienttoclass``: book, or answer why not."""
        body = _body(
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
                return _ok({"Visit": visit_out})
            if service is not None:
                service.remaining -= 1
            visit = self._book(record, client, service)
            return _ok({"Visit": added_visit_json(visit, record, client.id, wire)})

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
        return _ok({"Visit": visit_out})

    def _remove_client_from_class(self: MindbodyFake, request: Request) -> Response:
        """``POST /class/removeclientfromclass``: early or late cancel."""
        body = _body(
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
            return _ok({"Class": self._class_out(record)})

    # ----------------------------------------------------------------- clients

    def _clients(self: MindbodyFake, request: Request) -> Response:
        """``GET /client/clients`` by ids (at most 20) or search text."""
        check_names(
            request.query,
            _PAGING
            | {
                "request.clientIDs",
                "request.includeInactive",
                "request.isProspect",
                "request.lastModifiedDate",
                "request.searchText",
                "request.uniqueIds",
            },
        )
        ids = request.query.get("request.clientIDs", [])
        if len(ids) > 20:
            raise invalid("At most 20 client IDs can be requested at once.")
        unique_ids = set(int_list(request.query, "request.uniqueIds"))
        text = (single(request.query, "request.searchText") or "").casefold()
        chosen = page(request.query)
        with self._lock:
            found = [
                client
                for client in self.clients.values()
                if (not ids or client.id in ids)
                and (not unique_ids or client.unique_id in unique_ids)
                and (not text or text in _searchable(client))
            ]
            items, pagination = chosen.cut(found)
            wire = self._wire()
            out = [client_json(client, wire) for client in items]
        return _ok({"PaginationResponse": pagination, "Clients": out})

    def _required_client(self: MindbodyFake, request: Request) -> Client:
        client_id = single(request.query, "request.clientId")
        if not client_id:
            raise invalid("request.clientId is required.")
        return self._client_or_refuse(client_id)

    def _client_visits(self: MindbodyFake, request: Request) -> Response:
        """``GET /client/clientvisits`` between two dates (defaults: today)."""
        query = request.query
        check_names(
            query,
            _PAGING
            | {
                "request.clientAssociatedSitesOffset",
                "request.clientId",
                "request.crossRegionalLookup",
                "request.endDate",
                "request.order",
                "request.startDate",
                "request.uniqueClientId",
                "request.unpaidsOnly",
            },
        )
        zone = self.zone
        today = datetime.combine(datetime.now(zone).date(), time(), tzinfo=zone)
        end = datetime_param(query, "request.endDate", zone) or today
        start = datetime_param(query, "request.startDate", zone) or end
        first_day = start.astimezone(zone).date()
        last_day = end.astimezone(zone).date()
        order = (single(query, "request.order") or "asc").lower()
        if order not in ("asc", "desc"):
            raise invalid("request.order must be asc or desc.")
        unpaid_only = bool_param(query, "request.unpaidsOnly") or False
        chosen = page(query)
        with self._lock:
            client = self._required_client(request)
            wire = self._wire()
            found = [
                (self.classes[visit.class_id], visit)
                for visit in self.visits
                if visit.client_id == client.id
                and first_day
                <= self.classes[visit.class_id].start.astimezone(zone).date()
                <= last_day
                and not (unpaid_only and visit.service is not None)
            ]
            found.sort(
                key=lambda pair: (pair[0].start, pair[1].id), reverse=order == "desc"
            )
            items, pagination = chosen.cut(found)
            out = [visit_json(visit, record, wire) for record, visit in items]
        return _ok({"PaginationResponse": pagination, "Visits": out})

    def _client_contracts(self: MindbodyFake, request: Request) -> Response:
        """``GET /client/clientcontracts``: the contracts the client bought."""
        check_names(
            request.query,
            _PAGING
            | {
                "request.clientAssociatedSitesOffset",
                "request.clientId",
                "request.crossRegionalLookup",
                "request.uniqueClientId",
            },
        )
        chosen = page(request.query)
        with self._lock:
            client = self._required_client(request)
            found = [c for c in self.contracts.values() if c.client_id == client.id]
            items, pagination = chosen.cut(found)
            wire = self._wire()
            out = [contract_json(contract, wire) for contract in items]
        return _ok({"PaginationResponse": pagination, "Contracts": out})

    def _memberships(self: MindbodyFake, request: Request) -> Response:
        """``GET /client/activeclientmemberships``: those active today."""
        check_names(
            request.query,
            _PAGING
            | {
                "request.clientAssociatedSitesOffset",
                "request.clientId",
                "request.crossRegionalLookup",
                "request.locationId",
                "request.uniqueClientId",
            },
        )
        chosen = page(request.query)
        with self._lock:
            client = self._required_client(request)
            today = datetime.now(self.zone).date()
            found = [
                m
                for m in self.memberships
                if m.client_id == client.id and m.start <= today <= m.end
            ]
            items, pagination = chosen.cut(found)
            wire = self._wire()
            out = [membership_json(m, wire) for m in items]
        return _ok({"PaginationResponse": pagination, "ClientMemberships": out})

    def _client_services(self: MindbodyFake, request: Request) -> Response:
        """``GET /client/clientservices``: the client's pricing options."""
        query = request.query
        check_names(
            query,
            _PAGING
            | {
                "request.classId",
                "request.classScheduleID",
                "request.clientAssociatedSitesOffset",
                "request.clientId",
                "request.clientIds",
                "request.crossRegionalLookup",
                "request.endDate",
                "request.excludeInactiveSites",
                "request.ignoreCrossRegionalSiteLimit",
                "request.locationIds",
                "request.programIds",
                "request.sessionTypeId",
                "request.showActiveOnly",
                "request.startDate",
                "request.uniqueClientId",
                "request.uniqueClientIds",
                "request.useActivateDate",
                "request.visitCount",
            },
        )
        int_param(query, "request.classId")
        active_only = bool_param(query, "request.showActiveOnly") or False
        chosen = page(query)
        with self._lock:
            client = self._required_client(request)
            found = [
                s
                for s in self.services
                if s.client_id == client.id and (not active_only or s.remaining > 0)
            ]
            items, pagination = chosen.cut(found)
            wire = self._wire()
            out = [service_json(s, wire) for s in items]
        return _ok({"PaginationResponse": pagination, "ClientServices": out})

    def _suspend_contract(self: MindbodyFake, request: Request) -> Response:
        """``POST /client/suspendcontract``: the contract's autopay suspended."""
        body = _body(
            request,
            {
                "ClientId": str,
                "ClientContractId": int,
                "SuspensionType": str,
                "SuspensionStart": str,
                "Duration": int,
                "DurationUnit": int,
                "OpenEnded": bool,
                "SuspensionNotes": str,
                "SuspensionFee": (int, float),
            },
        )
        if not body.get("ClientId") or body.get("ClientContractId") is None:
            raise invalid("ClientId and ClientContractId are required.")
        if not (
            body.get("OpenEnded") or body.get("SuspensionType") or body.get("Duration")
        ):
            raise invalid("Give a SuspensionType, a Duration or OpenEnded.")
        if body.get("SuspensionStart") is not None:
            try:
                datetime.fromisoformat(body["SuspensionStart"])
            except ValueError:
                raise invalid("SuspensionStart is not a valid date.") from None
        with self._lock:
            client = self._client_or_refuse(body["ClientId"])
            contract = self.contracts.get(body["ClientContractId"])
            if contract is None or contract.client_id != client.id:
                raise invalid(
                    f"Contract {body['ClientContractId']} not found for client {client.id}."
                )
            contract.autopay_status = "Suspended"
            contract.suspensions.append(dict(body))
            self.suspensions.append(dict(body))
            return _ok({"Contract": contract_json(contract, self._wire())})


def _searchable(client: Client) -> str:
    parts = [client.first_name, client.last_name, client.email or "", client.id]
    return " ".join(parts).casefold()
