"""The ``memberships`` kind served by the gym's Mindbody site: the member's active
contract (or, without one, her current membership pricing option). Only what
the reads prove is told: a contract whose ``AutopayStatus`` is "Suspended" is
``frozen``, never ``active``; none in force today is no membership. A contract
without an ``EndDate`` (month to month) is in force from its start until it is
terminated, and is told with ``ends_on`` null.

Freezes stay on the built-in domain: Mindbody's API can suspend a contract
(``POST /client/suspendcontract``), but its reads show at most that a contract is
suspended (``AutopayStatus``), never the days of a suspension, so no verifier could
ever confirm a freeze of given dates (R8) and every freeze would end unverifiable.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterator
from typing import Any

from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from tools.integrations.memberships import MembershipsClient
from tools.integrations.mindbody.identity import MindbodyKind


def _day(value: Any) -> datetime.date | None:
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return datetime.date.fromisoformat(value[:10])
    except ValueError:
        return None


class MindbodyMemberships(MindbodyKind):
    kind = "memberships"
    writes = frozenset({"freeze"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._built_in = MembershipsClient(self.business)

    @contextlib.contextmanager
    def rolled_back(self) -> Iterator[None]:
        with self._built_in.rolled_back():
            yield

    def current(self, *, member: Member) -> dict[str, Any] | None:
        """The member's contract in force today (one Mindbody shows suspended is
        told ``frozen``, never ``active``), else a membership whose dates cover
        today; ``None`` when the reads prove none is active."""
        client = self.client_id(member)
        today = business_today(business=self.business)
        params = {"request.clientId": client}
        suspended = None
        for contract in self.api.pages("/client/clientcontracts", "Contracts", params):
            start, end = _day(contract.get("StartDate")), _day(contract.get("EndDate"))
            ended = _day(contract.get("TerminationDate"))
            if not (start and start <= today and (end is None or today <= end)) or (
                ended and ended <= today
            ):
                continue
            if contract.get("AutopayStatus") == "Suspended":
                suspended = suspended or self._described(
                    contract.get("ContractName"), start, end, status="frozen"
                )
                continue
            return self._described(contract.get("ContractName"), start, end)
        if suspended is not None:
            return suspended
        memberships = self.api.pages(
            "/client/activeclientmemberships", "ClientMemberships", params
        )
        for membership in memberships:
            start = _day(membership.get("ActiveDate"))
            end = _day(membership.get("ExpirationDate"))
            if (
                start
                and end
                and start <= today <= end
                and membership.get("Current") is not False
            ):
                return self._described(membership.get("Name"), start, end)
        return None

    def _described(
        self,
        name: Any,
        start: datetime.date,
        end: datetime.date | None,
        status: str = "active",
    ) -> dict[str, Any]:
        return {
            "plan": str(name or ""),
            "status": status,
            "starts_on": start.isoformat(),
            "ends_on": end.isoformat() if end else None,
            "freezes": [],
        }

    def freeze(
        self, *, member: Member, start: datetime.date, end: datetime.date
    ) -> dict[str, Any]:
        return self._built_in.freeze(member=member, start=start, end=end)

    def find_freeze(self, *, member: Member, freeze_id: int) -> dict[str, Any] | None:
        return self._built_in.find_freeze(member=member, freeze_id=freeze_id)
