"""The fake Mindbody site's records (clients, classes, visits, pricing options,
contracts, memberships) and how each is written on the wire, field names as
the v6 document's models spell them.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from tests.fakes.mindbody_wire import wire_date, wire_datetime


@dataclass(frozen=True)
class Wire:
    """How date-times are written: the site's zone and the style (``"local"``:
    site-local without offset; ``"utc"``: UTC with ``Z``)."""

    zone: ZoneInfo
    style: str
    site_id: int

    def dt(self, moment: datetime | None) -> str | None:
        return wire_datetime(moment, self.zone, self.style)


@dataclass
class Client:
    id: str
    unique_id: int
    first_name: str
    last_name: str
    email: str | None
    mobile_phone: str | None
    created: datetime
    active: bool = True
    modified: datetime | None = None

    @property
    def last_modified(self) -> datetime:
        return self.modified or self.created


@dataclass
class Service:
    """A pricing option the client bought (``ClientService``)."""

    id: int
    client_id: str
    product_id: int
    name: str
    count: int
    remaining: int
    active_date: date
    expiration_date: date
    program_id: int


@dataclass
class Staff:
    id: int
    first_name: str
    last_name: str


@dataclass
class ClassRecord:
    id: int
    schedule_id: int
    description_id: int
    name: str
    start: datetime
    end: datetime
    capacity: int
    staff: Staff
    location_id: int
    location_name: str
    program_id: int
    modified: datetime
    canceled: bool = False
    waitlist_size: int = 0


@dataclass
class Visit:
    id: int
    class_id: int
    client_id: str
    unique_client_id: int
    service: Service | None
    modified: datetime
    late_cancelled: bool = False


@dataclass
class WaitlistEntry:
    id: int
    class_id: int
    client_id: str


@dataclass
class Contract:
    """A contract sold to a client (``ClientContract``); ``id`` is the sale's."""

    id: int
    contract_id: int
    client_id: str
    unique_client_id: int
    name: str
    start: date
    end: date | None  # None: month to month, until terminated
    agreement_date: date
    autopay_status: str = "Active"
    suspensions: list[dict[str, Any]] = field(default_factory=list)
    terminated: date | None = None  # as staff terminate it at the desk


@dataclass
class Membership:
    """An active membership (``ClientMembership``), a kind of pricing option."""

    id: int
    membership_id: int
    client_id: str
    name: str
    start: date
    end: date
    program_id: int
    count: int
    remaining: int


# ---------------------------------------------------------------- serializers


def client_json(client: Client, wire: Wire) -> dict[str, Any]:
    """A ``ClientWithSuspensionInfo`` as ``GET /client/clients`` lists it."""
    return {
        "SuspensionInfo": {
            "BookingSuspended": False,
            "SuspensionStartDate": None,
            "SuspensionEndDate": None,
        },
        "Id": client.id,
        "UniqueId": client.unique_id,
        "FirstName": client.first_name,
        "MiddleName": None,
        "LastName": client.last_name,
        "Email": client.email,
        "MobilePhone": client.mobile_phone,
        "HomePhone": None,
        "WorkPhone": None,
        "Active": client.active,
        "Status": "Active" if client.active else "Non-Member",
        "IsProspect": False,
        "IsCompany": False,
        "CreationDate": wire.dt(client.created),
        "LastModifiedDateTime": wire.dt(client.last_modified),
        "Country": None,
        "State": None,
        "City": None,
        "PostalCode": None,
        "AccountBalance": 0.0,
        "Action": "None",
        "SendAccountEmails": client.email is not None,
        "SendAccountTexts": False,
        "SendPromotionalEmails": False,
        "SendPromotionalTexts": False,
        "SendScheduleEmails": client.email is not None,
        "SendScheduleTexts": False,
    }


def service_json(service: Service, wire: Wire) -> dict[str, Any]:
    """A ``ClientService`` (a pricing option the client bought)."""
    today = datetime.now(wire.zone).date()
    return {
        "Id": service.id,
        "ProductId": service.product_id,
        "Name": service.name,
        "Count": service.count,
        "Remaining": service.remaining,
        "Current": service.remaining > 0
        and service.active_date <= today <= service.expiration_date,
        "ActiveDate": wire_date(service.active_date),
        "ExpirationDate": wire_date(service.expiration_date),
        "PaymentDate": wire_date(service.active_date),
        "Program": {"Id": service.program_id, "Name": "Classes"},
        "SiteId": wire.site_id,
        "Action": "None",
        "ClientID": service.client_id,
        "Returned": False,
    }


def _staff_json(staff: Staff) -> dict[str, Any]:
    return {
        "Id": staff.id,
        "FirstName": staff.first_name,
        "LastName": staff.last_name,
        "Name": f"{staff.first_name} {staff.last_name}",
        "DisplayName": staff.first_name,
        "ClassTeacher": True,
    }


def class_json(
    record: ClassRecord,
    wire: Wire,
    *,
    booked: list[Visit],
    waiting: int,
    visits: list[dict[str, Any]] | None = None,
    enrolled: bool = False,
) -> dict[str, Any]:
    """A ``Class``; ``visits`` only for ``GET /class/classvisits``."""
    total = len(booked)
    now = datetime.now(wire.zone)
    return {
        "ClassScheduleId": record.schedule_id,
        "Visits": visits if visits is not None else [],
        "Clients": [],
        "Location": {"Id": record.location_id, "Name": record.location_name},
        "Resource": None,
        "MaxCapacity": record.capacity,
        "WebCapacity": record.capacity,
        "TotalBooked": total,
        "TotalSignedIn": 0,
        "TotalBookedWaitlist": waiting,
        "WebBooked": 0,
        "SemesterId": None,
        "IsCanceled": record.canceled,
        "Substitute": False,
        "Active": True,
        "IsWaitlistAvailable": record.waitlist_size > waiting,
        "IsEnrolled": enrolled,
        "HideCancel": False,
        "Id": record.id,
        # For the client named in the request: not one already booked.
        "IsAvailable": not record.canceled
        and not enrolled
        and total < record.capacity
        and record.start > now,
        "StartDateTime": wire.dt(record.start),
        "EndDateTime": wire.dt(record.end),
        "LastModifiedDateTime": wire.dt(record.modified),
        "ClassDescription": {
            "Active": True,
            "Description": "",
            "Id": record.description_id,
            "Name": record.name,
            "Program": {"Id": record.program_id, "Name": "Classes"},
            "SessionType": {"Id": record.program_id, "Name": record.name},
        },
        "Staff": _staff_json(record.staff),
        "BookingWindow": None,
        "BookingStatus": "PaymentRequired",
        "VirtualStreamLink": None,
        "WaitListSize": record.waitlist_size,
        "ClassNotes": None,
    }


def visit_json(visit: Visit, record: ClassRecord, wire: Wire) -> dict[str, Any]:
    """A ``Visit`` as class rosters and client visit lists show it."""
    service = visit.service
    return {
        "AppointmentId": 0,
        "AppointmentGenderPreference": "None",
        "AppointmentStatus": "None",
        "ClassId": record.id,
        "ClientId": visit.client_id,
        "ClientPhotoUrl": None,
        "ClientUniqueId": visit.unique_client_id,
        "StartDateTime": wire.dt(record.start),
        "EndDateTime": wire.dt(record.end),
        "Id": visit.id,
        "LastModifiedDateTime": wire.dt(visit.modified),
        "LateCancelled": visit.late_cancelled,
        "SiteId": wire.site_id,
        "LocationId": record.location_id,
        "MakeUp": False,
        "Name": record.name,
        "ServiceId": service.id if service else None,
        "ServiceName": service.name if service else None,
        "ProductId": service.product_id if service else None,
        "SignedIn": False,
        "StaffId": record.staff.id,
        "WebSignup": False,
        "Action": "None",
        "Missed": False,
        "VisitType": 0,
        "TypeGroup": record.program_id,
        "TypeTaken": record.name,
    }


def added_visit_json(
    visit: Visit | None,
    record: ClassRecord,
    client_id: str,
    wire: Wire,
    *,
    waitlist_entry: int | None = None,
) -> dict[str, Any]:
    """The ``AddClientToClassVisit`` answered by ``POST /class/addclienttoclass``;
    ``visit`` is None for a test run or a waiting-list entry."""
    service = visit.service if visit else None
    return {
        "AppointmentId": 0,
        "AppointmentGenderPreference": "None",
        "AppointmentStatus": "None",
        "ClassId": record.id,
        "ClientId": client_id,
        "StartDateTime": wire.dt(record.start),
        "EndDateTime": wire.dt(record.end),
        "Id": visit.id if visit else 0,
        "LastModifiedDateTime": wire.dt(visit.modified) if visit else None,
        "LateCancelled": False,
        "LocationId": record.location_id,
        "MakeUp": False,
        "Name": record.name,
        "ServiceId": service.id if service else None,
        "ServiceName": service.name if service else None,
        "ProductId": service.product_id if service else None,
        "SignedIn": False,
        "StaffId": record.staff.id,
        "WebSignup": False,
        "Action": "Added",
        "CrossRegionalBookingPerformed": False,
        "SiteId": wire.site_id,
        "WaitlistEntryId": waitlist_entry,
    }


def contract_json(contract: Contract, wire: Wire) -> dict[str, Any]:
    """A ``ClientContract``; a suspended one has ``AutopayStatus`` "Suspended"
    (the only field of the model that shows a suspension)."""
    return {
        "PayerClientId": contract.unique_client_id,
        "AgreementDate": wire_date(contract.agreement_date),
        "AutopayStatus": contract.autopay_status,
        "AutoRenewing": True,
        "FirstAutoPay": 0.0,
        "LastAutoPay": 0.0,
        "NormalAutoPay": 0.0,
        "IsMonthToMonth": contract.end is None,
        "AutoRenewClientContractID": None,
        "ContractText": None,
        "ContractAutoRenewed": False,
        "ContractName": contract.name,
        "EndDate": wire_date(contract.end),
        "Id": contract.id,
        "OriginationLocationId": 1,
        "StartDate": wire_date(contract.start),
        "SiteId": wire.site_id,
        "UpcomingAutopayEvents": [],
        "ContractID": contract.contract_id,
        "TerminationDate": wire_date(contract.terminated),
        "MinimumCommitmentValue": 0,
        "MinimumCommitmentUnit": None,
        "MinimumCommitmentEndDate": None,
    }


def membership_json(membership: Membership, wire: Wire) -> dict[str, Any]:
    """A ``ClientMembership`` as ``GET /client/activeclientmemberships`` lists it."""
    today = datetime.now(wire.zone).date()
    return {
        "RestrictedLocations": [],
        "IconCode": None,
        "MembershipId": membership.membership_id,
        "ActiveDate": wire_date(membership.start),
        "Count": membership.count,
        "Current": membership.start <= today <= membership.end,
        "ExpirationDate": wire_date(membership.end),
        "Id": membership.id,
        "ProductId": membership.membership_id,
        "Name": membership.name,
        "PaymentDate": wire_date(membership.start),
        "Program": {"Id": membership.program_id, "Name": "Classes"},
        "Remaining": membership.remaining,
        "SiteId": wire.site_id,
        "Action": "None",
        "ClientID": membership.client_id,
        "Returned": False,
    }
