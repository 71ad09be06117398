"""The fake Mindbody site's set-up for tests: clients (with a pricing option to
pay bookings, or none), classes (with clients already booked), contracts and
memberships.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from tests.fakes.mindbody_data import (
    ClassRecord,
    Client,
    Contract,
    Membership,
    Service,
    Staff,
    Visit,
    Wire,
)


class SiteSetup:
    """Mixed into :class:`MindbodyFake`: what a test puts in the site first.

    The attributes used here are created by ``MindbodyFake.__init__``.
    """

    time_zone: str
    datetime_style: str
    site_id: str

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)

    def _wire(self) -> Wire:
        return Wire(self.zone, self.datetime_style, int(self.site_id))

    def _next_id(self) -> int:
        return next(self._ids)

    def add_client(
        self,
        *,
        client_id: str | None = None,
        first_name: str = "Ana",
        last_name: str = "García",
        email: str | None = None,
        mobile_phone: str | None = None,
        can_pay: bool = True,
    ) -> str:
        """A client; ``can_pay`` gives them a 10-class pass to pay bookings."""
        with self._lock:
            unique = self._next_id()
            client_id = client_id or str(100000 + unique)
            if client_id in self.clients:
                raise ValueError(f"client {client_id!r} exists")
            self.clients[client_id] = Client(
                id=client_id,
                unique_id=unique,
                first_name=first_name,
                last_name=last_name,
                email=email,
                mobile_phone=mobile_phone,
                created=datetime.now(UTC),
            )
            if can_pay:
                today = datetime.now(self.zone).date()
                self.services.append(
                    Service(
                        id=self._next_id(),
                        client_id=client_id,
                        product_id=501,
                        name="10 Class Pass",
                        count=10,
                        remaining=10,
                        active_date=today - timedelta(days=30),
                        expiration_date=today + timedelta(days=335),
                        program_id=1,
                    )
                )
        return client_id

    def client_mobile_changed(self, client_id: str, mobile_phone: str | None) -> None:
        """The client's mobile as staff change it at the desk (now modified)."""
        with self._lock:
            client = self.clients[client_id]
            client.mobile_phone = mobile_phone
            client.modified = datetime.now(UTC)

    def add_class(
        self,
        *,
        class_id: int | None = None,
        name: str = "Spinning",
        start: datetime,
        end: datetime | None = None,
        capacity: int = 10,
        booked_by: Sequence[str] = (),
        staff_name: str = "Alex Trainer",
        description_id: int | None = None,
        waitlist_size: int = 0,
    ) -> int:
        """A scheduled class; ``booked_by`` are clients already in it (unpaid)."""
        if start.tzinfo is None:
            raise ValueError("start must be an aware datetime")
        first, _, last = staff_name.partition(" ")
        with self._lock:
            class_id = class_id if class_id is not None else self._next_id()
            if class_id in self.classes:
                raise ValueError(f"class {class_id} exists")
            record = ClassRecord(
                id=class_id,
                schedule_id=class_id + 500000,
                description_id=description_id or 200 + len(self.classes),
                name=name,
                start=start,
                end=end or start + timedelta(hours=1),
                capacity=capacity,
                staff=Staff(id=100000001, first_name=first, last_name=last),
                location_id=1,
                location_name="Main studio",
                program_id=1,
                modified=datetime.now(UTC),
                waitlist_size=waitlist_size,
            )
            self.classes[class_id] = record
            for client_id in booked_by:
                client = self.clients.get(client_id)
                if client is None:
                    raise ValueError(f"unknown client {client_id!r}")
                self._book(record, client, None)
        return class_id

    def cancel_class(self, class_id: int) -> None:
        """Mark a class cancelled by the studio (``IsCanceled``)."""
        with self._lock:
            self.classes[class_id].canceled = True

    def add_contract(
        self,
        *,
        client_id: str,
        contract_id: int | None = None,
        name: str = "Monthly membership",
        start: date,
        end: date | None,
    ) -> int:
        """A contract sold to the client; returns its ``Id`` (the sale's). With
        no ``end`` it is month to month (``EndDate`` null)."""
        with self._lock:
            client = self.clients[client_id]
            sale_id = contract_id if contract_id is not None else self._next_id()
            self.contracts[sale_id] = Contract(
                id=sale_id,
                contract_id=300 + len(self.contracts),
                client_id=client_id,
                unique_client_id=client.unique_id,
                name=name,
                start=start,
                end=end,
                agreement_date=start,
            )
        return sale_id

    def add_membership(
        self,
        *,
        client_id: str,
        membership_id: int | None = None,
        name: str = "Unlimited membership",
        start: date,
        end: date,
    ) -> int:
        """A membership the client holds; returns its ``Id``."""
        with self._lock:
            if client_id not in self.clients:
                raise ValueError(f"unknown client {client_id!r}")
            record = Membership(
                id=self._next_id(),
                membership_id=membership_id or 400 + len(self.memberships),
                client_id=client_id,
                name=name,
                start=start,
                end=end,
                program_id=1,
                count=0,
                remaining=0,
            )
            self.memberships.append(record)
        return record.id

    def _book(
        self, record: ClassRecord, client: Client, service: Service | None
    ) -> Visit:
        visit = Visit(
            id=self._next_id() + 90000000,
            class_id=record.id,
            client_id=client.id,
            unique_client_id=client.unique_id,
            service=service,
            modified=datetime.now(UTC),
        )
        self.visits.append(visit)
        return visit

    # ---------------------------------------------------------- observations
