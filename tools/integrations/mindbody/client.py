"""The HTTP client of Mindbody's Public API v6: headers, errors, paging.

Every request carries the gym's ``Api-Key`` and ``SiteId`` headers, and (but for
issuing the user token) the staff user token in ``Authorization``. Failures are
classified by what is known about delivery (R6):

- the connection was refused or never established: ``NotDelivered``;
- the request was sent and no answer came, or a server error answered it:
  ``OutcomeUnknown`` for a write, ``IntegrationUnavailable`` for a read;
- 429, or the daily call limit: ``RateLimited`` (not processed), and no request
  is sent before its ``Retry-After`` has passed;
- the key, the site or the staff user refused: ``CredentialsRefused``, and the
  integration is marked failing until the owner tests it again;
- Mindbody's own refusal (``Error.Code``): the domain's refusal a member is told
  in her words (a full class), or ``FailedForMember`` (no pass to pay a class).

An expired user token is issued again once per request, never in a loop. Nothing
this module raises or logs carries a credential or Mindbody's own text: each
failure is told in this module's words, by kind.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from gymnasia.errors import Conflict, InvalidValue, NotFound
from tools.integrations.addresses import destination_allowed
from tools.integrations.errors import (
    CredentialsRefused,
    FailedForMember,
    IntegrationFailed,
    IntegrationUnavailable,
    NotDelivered,
    OutcomeUnknown,
    RateLimited,
)
from tools.integrations.mindbody import token

DEFAULT_TIMEOUT_SECONDS = 10.0
CONNECT_TIMEOUT_SECONDS = 3.0
#: A page of a read (Mindbody's own default), and how many pages a read follows.
PAGE_LIMIT = 100
MAX_PAGES = 5
#: How long requests wait after a 429 that gave no ``Retry-After``.
DEFAULT_RETRY_AFTER_SECONDS = 60.0

# Each failure in this module's own words (an owner reads the credentials' ones
# in admin, in her language: ``gettext`` at display).
NOT_ALLOWED = gettext_noop(
    "The address is not one this installation allows for Mindbody."
)
NOT_REACHED = gettext_noop("Mindbody could not be reached.")
NO_ANSWER = gettext_noop("Mindbody did not answer.")
NOT_MINDBODY = gettext_noop("The address did not answer as Mindbody's API does.")
RATE_LIMITED = gettext_noop("Mindbody's call limit was reached; nothing was sent.")
KEY_REFUSED = gettext_noop("Mindbody refused the API key.")
SITE_REFUSED = gettext_noop(
    "Mindbody does not know the site id, or the API key may not use that site."
)
STAFF_REFUSED = gettext_noop("Mindbody refused the staff user's name or password.")
NO_PERMISSION = gettext_noop(
    "The staff user has no permission in Mindbody for what Gymnasia needs."
)


@dataclass(frozen=True)
class Connection:
    """Where and as whom requests go: the stored integration's settings."""

    integration_id: int
    site_id: str
    api_key: str
    username: str
    password: str
    base_url: str
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    #: Changes with the stored credentials: a new password never reuses a token.
    fingerprint: str = ""

    def __repr__(self) -> str:
        return f"Connection(integration={self.integration_id}, site={self.site_id!r})"


def error_of(body: Any) -> tuple[str, str]:
    """Mindbody's ``Error.Code`` and ``Error.Message`` (empty when absent)."""
    error = body.get("Error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", ""
    return str(error.get("Code") or ""), str(error.get("Message") or "")


def _code_of(response: httpx.Response) -> str:
    try:
        return error_of(response.json())[0]
    except ValueError:
        return ""


def _daily_limit(code: str, message: str) -> bool:
    words = f"{code} {message}".lower()
    return "limit" in words and ("call" in words or "daily" in words)


def credentials_refusal(code: str, *, issuing: bool) -> str:
    """Which credential Mindbody refused, from its error code. Issuing a token
    needs no token, so a denied access there is the API key's."""
    lowered = code.lower()
    if "site" in lowered:
        return SITE_REFUSED
    if "key" in lowered or (issuing and lowered == "deniedaccess"):
        return KEY_REFUSED
    return STAFF_REFUSED


def refusal_for(code: str) -> Exception:
    """Mindbody's refusal of a request (a 4xx with ``Error.Code``) as ours."""
    lowered = code.lower()
    if "full" in lowered:
        return Conflict(_("This class is full."), code="class_full")
    if "alreadybooked" in lowered or "alreadyonwaitlist" in lowered:
        return Conflict(
            _("The member is already booked into this class."), code="already_booked"
        )
    if "payment" in lowered or "pricing" in lowered:
        return FailedForMember(
            "The member has no pass or membership that pays for this class; "
            "nothing was booked.",
            code="class_requires_payment",
        )
    if lowered in ("invalidclassid", "classnotfound", "classschedulenotfound"):
        return NotFound(
            _("No class with that session_id."),
            field="session_id",
            code="class_not_found",
        )
    if lowered == "clientnotfound":
        return NotFound(
            _("The gym's booking system has no client record for this member."),
            code="member_not_found",
        )
    if "bookingtime" in lowered or "schedulingwindow" in lowered:
        return InvalidValue(
            _("This class cannot be booked now (outside its booking window)."),
            field="session_id",
            code="outside_booking_window",
        )
    return IntegrationFailed("Mindbody refused the request; nothing was changed")


class MindbodyClient:
    """Requests to one gym's Mindbody site."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._timeout = httpx.Timeout(
            connection.timeout, connect=min(connection.timeout, CONNECT_TIMEOUT_SECONDS)
        )

    def __repr__(self) -> str:
        return f"MindbodyClient({self.connection!r})"

    @property
    def _pause_key(self) -> str:
        return f"mindbody:{self.connection.integration_id}:not-before"

    def send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
        write: bool = False,
        authorized: bool = True,
    ) -> dict[str, Any]:
        """One request and its JSON answer; with a user token issued again once
        when Mindbody says the cached one is no longer valid."""
        if not destination_allowed(
            self.connection.base_url, settings.MINDBODY_API_BASES
        ):
            raise NotDelivered(NOT_ALLOWED)
        paused_until = token.cached(self._pause_key)
        if paused_until and paused_until > time.time():
            raise RateLimited(RATE_LIMITED, retry_after=paused_until - time.time())
        if not authorized:  # issuing the token: any refusal is of a credential
            answer = self._exchange(method, path, params, body, None, write)
            if 400 <= answer.status_code < 500 and answer.status_code != 429:
                self.refused(credentials_refusal(_code_of(answer), issuing=True))
            return self._answer(answer, write)
        authorization = token.user_token(self)
        response = self._exchange(method, path, params, body, authorization, write)
        if response.status_code == 401:
            token.forget(self)
            authorization = token.user_token(self)
            response = self._exchange(method, path, params, body, authorization, write)
            if response.status_code == 401:
                self.refused(STAFF_REFUSED)
        return self._answer(response, write)

    def _exchange(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None,
        body: dict[str, Any] | None,
        authorization: str | None,
        write: bool,
    ) -> httpx.Response:
        headers = {
            "Api-Key": self.connection.api_key,
            "SiteId": self.connection.site_id,
            "Accept": "application/json",
        }
        if authorization:
            headers["Authorization"] = authorization
        try:
            with httpx.Client(
                base_url=self.connection.base_url, timeout=self._timeout
            ) as client:
                return client.request(
                    method, path, params=params, json=body, headers=headers
                )
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise NotDelivered(NOT_REACHED) from None
        except httpx.TransportError:
            if write:
                raise OutcomeUnknown(NO_ANSWER) from None
            raise IntegrationUnavailable(NO_ANSWER) from None

    def _answer(self, response: httpx.Response, write: bool) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:  # a web page, a proxy's error: not Mindbody's API
            body = None
        status = response.status_code
        code, message = error_of(body)
        if status == 429 or (status in (403, 503) and _daily_limit(code, message)):
            self._pause(response.headers.get("Retry-After"))
        if status >= 500 or not isinstance(body, dict):
            reason = f"Mindbody answered {status}" if status >= 500 else NOT_MINDBODY
            if write:
                raise OutcomeUnknown(reason)
            raise IntegrationUnavailable(reason)
        if status == 403:
            self.refused(NO_PERMISSION)
        if status == 401 or "site" in code.lower():
            self.refused(credentials_refusal(code, issuing=False))
        if status >= 400:
            raise refusal_for(code)
        return body

    def _pause(self, retry_after: str | None) -> None:
        """No request is sent before Mindbody's ``Retry-After`` has passed."""
        try:
            seconds = float(retry_after) if retry_after else DEFAULT_RETRY_AFTER_SECONDS
        except ValueError:
            seconds = DEFAULT_RETRY_AFTER_SECONDS
        seconds = min(max(seconds, 0.0), 24 * 3600.0)
        token.cache_put(self._pause_key, time.time() + seconds, int(seconds) + 1)
        raise RateLimited(RATE_LIMITED, retry_after=seconds)

    def refused(self, reason: str) -> None:
        """Mindbody refused the credentials: the integration is failing (its
        tools are not offered) until the owner tests it again."""
        from tools.models import Integration

        Integration.objects.filter(pk=self.connection.integration_id).exclude(
            status=Integration.Status.DISCONNECTED
        ).update(status=Integration.Status.FAILING, last_error=reason)
        raise CredentialsRefused(reason)

    def pages(
        self,
        path: str,
        key: str,
        params: dict[str, Any],
        *,
        max_pages: int = MAX_PAGES,
    ) -> Iterator[dict[str, Any]]:
        """The items of a paged read, page after page (``Limit``/``Offset``, as
        ``PaginationResponse`` counts them), at most ``max_pages`` pages."""
        offset = 0
        for _page in range(max_pages):
            found = self.send(
                "GET",
                path,
                params={
                    **params,
                    "request.limit": PAGE_LIMIT,
                    "request.offset": offset,
                },
            )
            items = found.get(key) or []
            yield from items
            paging = found.get("PaginationResponse") or {}
            total = paging.get("TotalResults")
            offset += len(items)
            if not items or not isinstance(total, int) or offset >= total:
                return

    def health(self) -> None:
        """Raises when a user token cannot be issued, the site cannot be read, or
        the staff user may not read the site's clients."""
        token.forget(self)
        found = self.send(
            "GET", "/site/sites", params={"request.siteIds": self.connection.site_id}
        )
        ids = {str(site.get("Id")) for site in found.get("Sites") or []}
        if str(self.connection.site_id) not in ids:
            self.refused(SITE_REFUSED)
        # The staff user may read clients (their visits and contracts follow).
        self.send(
            "GET", "/client/clients", params={"request.limit": 1, "request.offset": 0}
        )
