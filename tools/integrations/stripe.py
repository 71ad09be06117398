"""The ``stripe`` integration: the gym's own Stripe account, over Stripe's REST API.

Card payments stay in the gym's Stripe account; Gymnasia lists a member's charges and
refunds them. Failures are classified by what is known about delivery (R6):

- the connection was refused or never established: ``NotDelivered``;
- the request was sent and no answer came (read timeout, dropped connection):
  ``OutcomeUnknown`` for a write, ``IntegrationUnavailable`` for a read;
- Stripe refused the key: ``IntegrationUnavailable``; Stripe rate-limited the
  request (it was not processed): ``NotDelivered``; a server error on a write:
  ``OutcomeUnknown``.

The secret key travels only in the ``Authorization`` header, and only to an address
of ``STRIPE_API_BASES`` (the operator's list; an owner chooses among them): a
name that resolves to a private, loopback or link-local address is refused
before anything is sent (an address listed as such a number is the operator's
choice, a local fake). No message, log line or result of this module carries the
key, nor what the remote side said: each failure is told in this module's own
words, by kind (the key refused, not reachable, no answer, not Stripe's answer).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from django.conf import settings
from django.utils.translation import gettext as _

from gymnasia.errors import InvalidValue, NotFound
from gymnasia.gyms.models import Business, Member
from tools.integrations.addresses import destination_allowed
from tools.integrations.errors import (
    IntegrationUnavailable,
    NotDelivered,
    OutcomeUnknown,
)

DEFAULT_BASE_URL = "https://api.stripe.com"
KEY_REFUSED = "Stripe refused the gym's key"
NOT_REACHED = "Stripe could not be reached"
NO_ANSWER = "Stripe did not answer"
NOT_STRIPE = "The address did not answer as Stripe's API does"
NOT_ALLOWED = "The address is not one this installation allows for Stripe"
DEFAULT_TIMEOUT_SECONDS = 10.0
CONNECT_TIMEOUT_SECONDS = 3.0
ZERO_DECIMAL_CURRENCIES = frozenset(
    {"bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd"}
    | {"vuv", "xaf", "xof", "xpf"}
)


def minor_units(amount: Decimal, currency: str) -> int:
    """An amount in currency units (12.50) as Stripe's integer minor units (1250)."""
    exponent = 0 if currency.lower() in ZERO_DECIMAL_CURRENCIES else 2
    scaled = amount * (10**exponent)
    if scaled != scaled.to_integral_value():
        raise InvalidValue(
            _("The amount has more decimals than %(currency)s allows.")
            % {"currency": currency.upper()},
            field="amount",
            code="too_many_decimals",
            params={"currency": currency.upper()},
        )
    return int(scaled)


def major_units(cents: int, currency: str) -> float | int:
    exponent = 0 if currency.lower() in ZERO_DECIMAL_CURRENCIES else 2
    value = Decimal(cents) / (10**exponent)
    return int(value) if value == value.to_integral_value() else float(value)


class StripeClient:
    kind = "stripe"
    writes = frozenset({"refund"})

    def __init__(
        self,
        business: Business,
        *,
        secret_key: str,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self.business = business
        self._secret_key = secret_key
        self._base_url = base_url.rstrip("/")
        self._timeout = httpx.Timeout(
            timeout, connect=min(timeout, CONNECT_TIMEOUT_SECONDS)
        )

    def __repr__(self) -> str:
        return f"StripeClient(business={self.business.pk}, base_url={self._base_url!r})"

    def _destination_allowed(self) -> bool:
        return destination_allowed(self._base_url, settings.STRIPE_API_BASES)

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        write: bool = False,
    ) -> dict[str, Any] | None:
        """One request; the JSON answer, or ``None`` for a missing resource (404)."""
        if not self._destination_allowed():
            raise NotDelivered(NOT_ALLOWED)
        headers = {"Authorization": f"Bearer {self._secret_key}"}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        try:
            with httpx.Client(base_url=self._base_url, timeout=self._timeout) as client:
                response = client.request(
                    method, path, params=params, data=data, headers=headers
                )
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise NotDelivered(NOT_REACHED) from None
        except httpx.TransportError:
            if write:
                raise OutcomeUnknown(NO_ANSWER) from None
            raise IntegrationUnavailable(NO_ANSWER) from None
        if response.status_code == 404:
            return None
        if response.status_code in (401, 403):
            raise IntegrationUnavailable(KEY_REFUSED)
        if response.status_code == 429:
            raise NotDelivered("Stripe rate-limited the request; it was not processed")
        if response.status_code >= 500:
            message = f"Stripe answered {response.status_code}"
            if write:
                raise OutcomeUnknown(message)
            raise IntegrationUnavailable(message)
        try:
            body = response.json()
        except ValueError:  # a web page, a proxy's error: not Stripe's API
            body = None
        if not isinstance(body, dict):
            if write:
                raise OutcomeUnknown(NOT_STRIPE)
            raise IntegrationUnavailable(NOT_STRIPE)
        if response.status_code >= 400:
            raise InvalidValue(
                _("Stripe refused the request."), code="payments_refused"
            )
        return body

    def health(self) -> None:
        """Raises when the account cannot be reached with the stored key."""
        if self._request("GET", "/v1/balance") is None:
            raise IntegrationUnavailable(
                "Stripe did not recognise the balance endpoint"
            )

    def customer_for(self, member: Member) -> str | None:
        """The Stripe customer of a member, matched by the member's email."""
        if not member.email:
            return None
        found = self._request(
            "GET", "/v1/customers", params={"email": member.email, "limit": 1}
        )
        customers = (found or {}).get("data", [])
        return str(customers[0]["id"]) if customers else None

    def list_charges(self, customer: str) -> list[dict[str, Any]]:
        found = self._request(
            "GET", "/v1/charges", params={"customer": customer, "limit": 20}
        )
        return list((found or {}).get("data", []))

    def get_charge(self, charge_id: str) -> dict[str, Any] | None:
        return self._request("GET", f"/v1/charges/{charge_id}")

    def refund(
        self, *, charge_id: str, cents: int, idempotency_key: str
    ) -> dict[str, Any]:
        refund = self._request(
            "POST",
            "/v1/refunds",
            data={"charge": charge_id, "amount": cents},
            idempotency_key=idempotency_key,
            write=True,
        )
        if refund is None:
            raise NotFound(
                _("No payment with that id for this member."),
                field="payment_id",
                code="payment_not_found",
            )
        return refund

    def get_refund(self, refund_id: str) -> dict[str, Any] | None:
        return self._request("GET", f"/v1/refunds/{refund_id}")
