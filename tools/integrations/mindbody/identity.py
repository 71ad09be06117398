"""Who a member is at the gym's Mindbody site: the client every call is about.

The client id comes from the member's record, never from a model's arguments
(R3, R4): the member's own id at the gym when the owner says the gym's site signs
members with their Mindbody client id, or else the one client whose e-mail is the
member's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.utils.translation import gettext as _

from gymnasia.errors import NotFound
from gymnasia.gyms.models import Business, Member
from tools.integrations.mindbody.client import MindbodyClient


class MindbodyKind:
    """The base of the clients of a kind served by Mindbody, for one business."""

    kind = ""
    writes: frozenset[str] = frozenset()

    def __init__(
        self, business: Business, *, api: MindbodyClient, member_id_is_client_id: bool
    ) -> None:
        self.business = business
        self.api = api
        self.member_id_is_client_id = member_id_is_client_id
        self._rehearsing = False
        self._client_ids: dict[int, str] = {}

    @property
    def rehearsing(self) -> bool:
        return self._rehearsing

    @contextlib.contextmanager
    def rolled_back(self) -> Iterator[None]:
        """Writes made within are sent as Mindbody's ``Test`` requests: checked
        by Mindbody, committed nowhere."""
        self._rehearsing = True
        try:
            yield
        finally:
            self._rehearsing = False

    def client_id(self, member: Member) -> str:
        """The member's client id at the site, or ``NotFound``."""
        if member.pk in self._client_ids:
            return self._client_ids[member.pk]
        found: str | None = None
        if self.member_id_is_client_id:
            found = member.external_id or None
        elif member.email:
            matches = [
                str(client.get("Id"))
                for client in self.api.pages(
                    "/client/clients", "Clients", {"request.searchText": member.email}
                )
                if str(client.get("Email") or "").lower() == member.email.lower()
            ]
            found = matches[0] if len(matches) == 1 else None
        if not found:
            raise NotFound(
                _("The gym's booking system has no client record for this member."),
                code="member_not_found",
            )
        self._client_ids[member.pk] = found
        return found
