"""A local stand-in for the slice of Mindbody's Public API v6 that Gymnasia
talks to, built from the published v6 reference, on loopback.

Which document: Mindbody's own OpenAPI (Swagger 2.0) document of the Public API,
``info.version`` "v6", as served at the API's ``/public/v6/swagger/doc`` address
and mirrored in public repositories (the api-evangelist/mindbody collection and
its OpenAPI 3 rendering generated from Mindbody's Python SDK, which agree on
every name used here). Paths, query parameter names (``request.<camelCase>``,
arrays as the name repeated), body field names (PascalCase), headers and the
response models (``PaginationResponse``, ``Class``, ``Visit``,
``AddClientToClassVisit``, ``ClientWithSuspensionInfo``, ``ClientContract``,
``ClientMembership``, ``ClientService``, ``IssueResponse``, ``Site``) follow it.

What the document does not say, and what the fake chose:

* Error statuses and codes. The document gives only the envelope
  ``{"Error": {"Message", "Code"}}`` (``ApiError``) and two example codes; the
  codes served are names from Mindbody's list of error codes, and which status
  and code answer which case is the fake's choice: a missing or wrong ``Api-Key`` is 401
  ``DeniedAccess``; a missing or foreign ``SiteId`` 400 ``InvalidSiteId``; a
  missing, unknown or expired staff token 401 ``DeniedAccess`` (messages
  differ); wrong staff credentials at ``/usertoken/issue`` 401
  ``InvalidLoginCredentials``; a staff user without the permission (see
  ``staff_denied``) 403 ``DeniedAccess``; a full class 400 ``ClassSignUpsFull``;
  a client already booked 400 ``ClientIsAlreadyBooked``; no usable pricing
  option while ``RequirePayment`` is true 400 ``ClassRequiresPayment``; an
  unknown or cancelled class 400 ``InvalidClassId``; an unknown client 400
  ``ClientNotFound``; removing a client who is not booked, a malformed or
  unknown parameter 400 ``InvalidParameter``; an unknown path 404 ``NotFound``.
* Rate limits. Not in the document; the published limits are a daily quota per
  key. ``rate_limited`` answers 429 ``TooManyRequests`` with ``Retry-After``
  (``seconds``, default 1); ``daily_limit`` answers 429 ``DailyLimitReached``
  with ``Retry-After`` up to the next midnight UTC.
* Paging. ``request.limit`` defaults to 100 (the document) and is capped at 200;
  ``request.offset`` is the number of records skipped.
* Date-times. The document types them ``date-time`` and, on visits, says UTC;
  the live API is known to write site-local times without an offset. The fake writes
  site-local without offset by default (``datetime_style = "local"``, the site's
  ``TimeZone``) or UTC with ``Z`` (``datetime_style = "utc"``); a query
  date-time without offset is read as site-local. ``IssueResponse.Expires`` is
  UTC (without ``Z`` in the local style, with it in the utc style).
* Tokens. ``Authorization`` takes the ``AccessToken`` as issued or prefixed with
  ``Bearer ``. Endpoints reading or changing a client's data need it; the site
  and the class list work without one but refuse a bad one. ``SiteId`` is
  required everywhere except ``GET /site/sites``, which the document lists
  without it (a foreign id in ``request.siteIds`` gives an empty ``Sites``).
* The class list filters ``request.startDateTime``/``request.endDateTime`` by
  the class's site-local date only, as the document notes; both default to
  today.
* The client list filters ``request.lastModifiedDate``: the clients modified
  on or after it (created, or changed with ``client_mobile_changed``).
* Cancelling: ``LateCancel`` true keeps the visit, ``LateCancelled`` true (still
  in the class's and the client's visits, out of ``roster``); false removes it
  and gives the session back to the pricing option.
* Suspending a contract: ``POST /client/suspendcontract`` sets the contract's
  ``AutopayStatus`` to "Suspended", the only field of ``ClientContract`` able
  to show it (the model has no suspension dates); ``suspensions`` keeps the
  bodies.
* Strictness. Unknown query parameters and body fields are refused (400) so a
  misspelt or mis-cased name fails instead of being ignored as Mindbody would;
  body fields must have the document's JSON types (``ClientId`` a string,
  ``ClassId`` an integer, flags booleans); the path must be spelt as the
  document spells it (lower case). The body is JSON (``application/json``).
* ``addclienttoclass`` is documented with request deduplication; the fake has
  none, so a repeated request books again (or meets ``ClientIsAlreadyBooked``).
* ``usertoken/renew`` adds a lifetime (7 times at most); ``revoke`` ends it.

Interface (stable; additions only)::

    fake = MindbodyFake(); fake.start(); ...; fake.close()  # or running_mindbody()
    fake.base_url                    # "http://127.0.0.1:<port>/public/v6"
    fake.site_id, fake.api_key, fake.staff_username, fake.staff_password
    fake.time_zone                   # the site's IANA zone, "Europe/Madrid"
    fake.datetime_style              # "local" (default) or "utc"
    fake.token_lifetime              # seconds, 24 h by default
    fake.staff_denied                # True: /class/ and /client/ answer 403
    fake.clients, fake.classes, fake.visits, fake.contracts   # the state
    fake.add_client(client_id="100015", first_name=..., last_name=...,
                    email=None, mobile_phone=None, can_pay=True) -> str
    fake.client_mobile_changed(client_id, mobile_phone)   # modified now
    fake.add_class(class_id=None, name="Spinning", start=<aware>, end=None,
                   capacity=10, booked_by=(), staff_name="Alex Trainer",
                   description_id=None, waitlist_size=0) -> int
    fake.cancel_class(class_id)
    fake.add_contract(client_id=..., contract_id=None, name="Monthly",
                      start=date, end=date|None) -> int  # the ClientContract Id
    fake.add_membership(client_id=..., membership_id=None, name="Unlimited",
                        start=date, end=date) -> int
    fake.fault(method, path, mode, *, times=1, seconds=0.0)
        # modes: "error_500", "lost_after", "rate_limited", "daily_limit",
        # "slow" (effect made, then ``seconds`` before answering), "refused"
        # (the listener closes now for ``seconds``, default 1.0, whatever the
        # path: a refused connection carries none), "token_expired"
    fake.refuse_connections(seconds); fake.listen_again()
    fake.expire_tokens()
    fake.requests  # dicts: method, path (under /public/v6), query (name -> list),
                   # headers (lower-case names), json (body or None), status
                   # (None while handled, or for a response lost on purpose)
    fake.count(method, path)         # requests that reached it
    fake.roster(class_id)            # client ids booked, in booking order
    fake.suspensions                 # bodies of accepted suspendcontract calls

Fixtures: ``mindbody_fake`` (a started fake) and ``mindbody_settings`` (the same
fake, with its ``base_url`` added to ``settings.MINDBODY_API_BASES``).

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.fakes.mindbody_data import (
    ClassRecord,
    Client,
    Contract,
    Membership,
    Service,
    Visit,
    WaitlistEntry,
)
from tests.fakes.mindbody_endpoints import ROUTES, Endpoints
from tests.fakes.mindbody_faults import Faults
from tests.fakes.mindbody_listener import API_PREFIX, MindbodyListener
from tests.fakes.mindbody_setup import SiteSetup
from tests.fakes.mindbody_wire import Refusal, Request, Response, error

__all__ = ["MindbodyFake", "mindbody_fake", "mindbody_settings", "running_mindbody"]

#: Paths whose answers a staff user without permission is refused.
_DATA = ("/class/", "/client/")


class MindbodyFake(SiteSetup, Faults, Endpoints, MindbodyListener):
    """An in-memory Mindbody site served over HTTP on 127.0.0.1."""

    def __init__(self, *, site_id: str = "-99", time_zone: str = "Europe/Madrid"):
        super().__init__()
        self.site_id = site_id
        self.api_key = secrets.token_hex(16)
        self.staff_username = "gym.owner"
        self.staff_password = "pw-" + secrets.token_hex(8)
        self.time_zone = time_zone
        self.datetime_style = "local"
        self.token_lifetime = 24 * 3600.0
        self.staff_denied = False

        self.requests: list[dict[str, Any]] = []
        self.suspensions: list[dict[str, Any]] = []
        self.clients: dict[str, Client] = {}
        self.classes: dict[int, ClassRecord] = {}
        self.visits: list[Visit] = []
        self.waitlist: list[WaitlistEntry] = []
        self.services: list[Service] = []
        self.contracts: dict[int, Contract] = {}
        self.memberships: list[Membership] = []

        self._lock = threading.RLock()
        self._tokens: dict[str, float] = {}
        self._renewals: dict[str, int] = {}
        self._faults: list[dict[str, Any]] = []
        self._ids = itertools.count(1001)

    # ------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Stop serving for good (same as :meth:`stop`)."""
        self.stop()

    def refuse_connections(self, seconds: float) -> None:
        """Refuse every TCP connection for ``seconds`` (nothing listens)."""
        self.refuse_for(seconds)

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(entry)

    def count(self, method: str, path: str) -> int:
        """How many requests for ``method`` ``path`` reached the fake."""
        if path.startswith(API_PREFIX):
            path = path[len(API_PREFIX) :]
        with self._lock:
            return sum(
                1
                for entry in self.requests
                if entry["method"] == method.upper() and entry["path"] == path
            )

    def roster(self, class_id: int) -> list[str]:
        """Client ids booked in the class (late cancellations left out)."""
        with self._lock:
            return [
                visit.client_id
                for visit in self.visits
                if visit.class_id == class_id and not visit.late_cancelled
            ]

    # ------------------------------------------------------- tokens and faults

    def expire_tokens(self) -> None:
        """Every token issued so far expires now."""
        with self._lock:
            for token in self._tokens:
                self._tokens[token] = 0.0

    def _issue_token(self) -> tuple[str, float]:
        token = secrets.token_hex(32)
        expires = time.time() + self.token_lifetime
        with self._lock:
            self._tokens[token] = expires
        return token, expires

    # ---------------------------------------------------------------- handling

    def _handle(self, request: Request) -> Response:  # type: ignore[override]
        """Route, apply a fault, authenticate, then answer."""
        route = ROUTES.get(request.path)
        if route is None:
            return error(404, "NotFound", "No HTTP resource matches the request.")
        method, handler_name, token_mode, needs_site = route
        if request.method != method:
            return error(405, "MethodNotAllowed", "The method is not allowed here.")
        fault = self._take_fault(request)
        early = self._early_fault(fault)
        if early is not None:
            return early
        try:
            self._check_key_and_site(request, needs_site)
            if token_mode != "ignored":
                self._check_token(request, token_mode == "required")
            response: Response = getattr(self, handler_name)(request)
        except Refusal as refusal:
            response = refusal.response
        if fault is not None and fault["mode"] == "slow":
            response.delay = fault["seconds"]
        if fault is not None and fault["mode"] == "lost_after":
            response.lost = True
        return response

    def _check_key_and_site(self, request: Request, needs_site: bool) -> None:
        """``Api-Key`` must be this site's key; ``SiteId`` this site, where the
        document requires the header."""
        key = request.header("Api-Key")
        if not key:
            raise Refusal(error(401, "DeniedAccess", "Missing API key."))
        if not secrets.compare_digest(key.encode(), self.api_key.encode()):
            raise Refusal(error(401, "DeniedAccess", "Invalid API key."))
        if not needs_site:
            return
        site = request.header("SiteId")
        if not site:
            raise Refusal(error(400, "InvalidSiteId", "Missing SiteId header."))
        if site.strip() != self.site_id:
            raise Refusal(
                error(400, "InvalidSiteId", f"Site {site} not found or not activated.")
            )

    def _presented_token(self, request: Request) -> str | None:
        """The token in ``Authorization``, as issued or after ``Bearer ``."""
        authorization = request.header("Authorization")
        if authorization is None:
            return None
        token = authorization.strip()
        if token[:7].lower() == "bearer ":
            token = token[7:].strip()
        return token

    def _check_token(self, request: Request, required: bool) -> None:
        """A sent token must be live; a required one must be sent. A staff user
        without permission (``staff_denied``) is refused the site's data."""
        token = self._presented_token(request)
        if token is None:
            if required:
                raise Refusal(
                    error(401, "DeniedAccess", "A staff user token is required.")
                )
            return
        with self._lock:
            expires = self._tokens.get(token)
        if expires is None:
            raise Refusal(error(401, "DeniedAccess", "Invalid access token."))
        if expires <= time.time():
            raise Refusal(error(401, "DeniedAccess", "The access token has expired."))
        if required and self.staff_denied and request.path.startswith(_DATA):
            raise Refusal(
                error(403, "DeniedAccess", "The staff user lacks this permission.")
            )


@contextmanager
def running_mindbody(**options: Any) -> Iterator[MindbodyFake]:
    """A started :class:`MindbodyFake` for a ``with`` block or a fixture."""
    fake = MindbodyFake(**options)
    fake.start()
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture
def mindbody_fake() -> Iterator[MindbodyFake]:
    """A started fake Mindbody site."""
    with running_mindbody() as fake:
        yield fake


@pytest.fixture
def mindbody_settings(mindbody_fake: MindbodyFake) -> Iterator[MindbodyFake]:
    """The fake, with its address in the operator's ``MINDBODY_API_BASES``."""
    from django.conf import settings
    from django.test import override_settings

    bases = list(getattr(settings, "MINDBODY_API_BASES", []))
    with override_settings(MINDBODY_API_BASES=[*bases, mindbody_fake.base_url]):
        yield mindbody_fake
