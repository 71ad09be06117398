"""The fake Mindbody's client endpoints: clients, their visits, contracts,
memberships and pricing options, and suspending a contract.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

from datetime import datetime, time
from typing import TYPE_CHECKING

from tests.fakes.mindbody_data import (
    Client,
    client_json,
    contract_json,
    membership_json,
    service_json,
    visit_json,
)
from tests.fakes.mindbody_wire import (
    PAGING,
    Request,
    Response,
    bool_param,
    check_names,
    datetime_param,
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


class ClientEndpoints:
    """Mixed into :class:`MindbodyFake`: ``/client/...``."""

    def _clients(self: MindbodyFake, request: Request) -> Response:
        """``GET /client/clients`` by ids (at most 20) or search text."""
        check_names(
            request.query,
            PAGING
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
        since = datetime_param(request.query, "request.lastModifiedDate", self.zone)
        chosen = page(request.query)
        with self._lock:
            found = [
                client
                for client in self.clients.values()
                if (not ids or client.id in ids)
                and (not unique_ids or client.unique_id in unique_ids)
                and (not text or text in _searchable(client))
                and (since is None or client.last_modified >= since)
            ]
            items, pagination = chosen.cut(found)
            wire = self._wire()
            out = [client_json(client, wire) for client in items]
        return ok({"PaginationResponse": pagination, "Clients": out})

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
            PAGING
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
        return ok({"PaginationResponse": pagination, "Visits": out})

    def _client_contracts(self: MindbodyFake, request: Request) -> Response:
        """``GET /client/clientcontracts``: the contracts the client bought."""
        check_names(
            request.query,
            PAGING
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
        return ok({"PaginationResponse": pagination, "Contracts": out})

    def _memberships(self: MindbodyFake, request: Request) -> Response:
        """``GET /client/activeclientmemberships``: those active today."""
        check_names(
            request.query,
            PAGING
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
        return ok({"PaginationResponse": pagination, "ClientMemberships": out})

    def _client_services(self: MindbodyFake, request: Request) -> Response:
        """``GET /client/clientservices``: the client's pricing options."""
        query = request.query
        check_names(
            query,
            PAGING
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
        return ok({"PaginationResponse": pagination, "ClientServices": out})

    def _suspend_contract(self: MindbodyFake, request: Request) -> Response:
        """``POST /client/suspendcontract``: the contract's autopay suspended."""
        body = json_body(
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
            return ok({"Contract": contract_json(contract, self._wire())})


def _searchable(client: Client) -> str:
    parts = [client.first_name, client.last_name, client.email or "", client.id]
    return " ".join(parts).casefold()
