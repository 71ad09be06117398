"""A local stand-in for the slice of Stripe's REST API that the app talks to.

Why: tests of the payment integration must exercise the real HTTP client code
(auth header, form encoding, timeouts, retries, idempotency keys) without reaching
the internet. This module serves Stripe's wire format (JSON bodies, list objects,
error envelopes, ``Request-Id`` and ``Idempotent-Replayed`` headers) on loopback,
from a background thread, and keeps its state in memory.

What: :class:`FakeStripe` holds customers, charges and refunds, records every
request it receives, and has fault modes that tests switch on by setting
attributes: refused connections for a while, a slow answer after a refund was
created, refunds that are answered but never stored, and a failing health check.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote

from tests.fakes.stripe_listener import RecordingListener
from tests.fakes.stripe_wire import (
    Params,
    _error,
    _format_money,
    _IdempotentResult,
    _json,
    _missing,
    _new_id,
    _now,
    _parse_int,
    _Request,
    _Response,
    _single,
    _unknown_params,
)

__all__ = ["FakeStripe", "running_fake_stripe"]

_DEFAULT_LIMIT = 10
_MAX_LIMIT = 100
_REFUND_REASONS = frozenset({"duplicate", "fraudulent", "requested_by_customer"})


class FakeStripe(RecordingListener):
    """An in-memory Stripe account served over HTTP on 127.0.0.1.

    Set-up happens through :meth:`add_customer` and :meth:`add_charge`; the app
    under test then talks HTTP to :attr:`base_url`. Afterwards, :attr:`requests`,
    :meth:`refund_posts` and :attr:`refunds` show what the app actually did.

    Fault modes are plain attributes (``delay_after_refund``, ``forget_refunds``,
    ``fail_health``) read at the moment each request is handled, plus
    :meth:`refuse_for` for a listener that is really gone for a while (see
    :class:`LoopbackListener`).
    """

    def __init__(self, *, secret_key: str) -> None:
        """Prepare an empty account that only accepts ``secret_key`` as Bearer."""
        super().__init__()
        if not secret_key:
            raise ValueError("secret_key must not be empty")
        self._secret_key = secret_key

        # Observations for assertions; written only under ``_lock``.
        self.requests: list[dict[str, Any]] = []
        self.customers: dict[str, dict[str, Any]] = {}
        self.charges: dict[str, dict[str, Any]] = {}
        self.refunds: dict[str, dict[str, Any]] = {}

        # Fault modes.
        self.delay_after_refund: float = 0.0
        self.forget_refunds: bool = False
        self.fail_health: bool = False

        # Data and idempotency store; the server handles requests in parallel.
        self._lock = threading.RLock()
        self._idempotency: dict[str, _IdempotentResult] = {}
        self._order: dict[str, int] = {}
        self._sequence = 0

    @property
    def secret_key(self) -> str:
        """The one key this fake account accepts (for tests that connect to it)."""
        return self._secret_key

    # -------------------------------------------------------------------- set-up

    def add_customer(self, *, email: str) -> str:
        """Create a customer with ``email`` and return its ``cus_`` id."""
        customer_id = _new_id("cus")
        with self._lock:
            self.customers[customer_id] = {
                "id": customer_id,
                "object": "customer",
                "email": email,
                "created": _now(),
                "livemode": False,
            }
            self._remember_order(customer_id)
        return customer_id

    def add_charge(
        self,
        *,
        customer: str,
        amount: int,
        currency: str = "eur",
        description: str = "",
        created: int | None = None,
    ) -> str:
        """Create a paid, succeeded, unrefunded charge and return its ``ch_`` id.

        ``amount`` is in minor units (cents). ``created`` (Unix seconds) lets a
        test control the newest-first order of charge lists.
        """
        if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
            raise ValueError("amount must be a positive integer of minor units")
        charge_id = _new_id("ch")
        with self._lock:
            if customer not in self.customers:
                raise ValueError(f"unknown customer {customer!r}")
            self.charges[charge_id] = {
                "id": charge_id,
                "object": "charge",
                "amount": amount,
                "amount_refunded": 0,
                "currency": currency.lower(),
                "customer": customer,
                "created": _now() if created is None else created,
                "description": description,
                "paid": True,
                "refunded": False,
                "status": "succeeded",
                "livemode": False,
            }
            self._remember_order(charge_id)
        return charge_id

    def _remember_order(self, object_id: str) -> None:
        """Note creation order, to break ties between equal ``created`` times."""
        self._sequence += 1
        self._order[object_id] = self._sequence

    # -------------------------------------------------------------- observations

    def refund_posts(self) -> list[dict[str, Any]]:
        """The recorded requests that were ``POST /v1/refunds``, in arrival order."""
        with self._lock:
            return [
                entry
                for entry in self.requests
                if entry["method"] == "POST" and entry["path"] == "/v1/refunds"
            ]

    def _record(self, entry: dict[str, Any]) -> None:
        """Append one request to :attr:`requests`."""
        with self._lock:
            self.requests.append(entry)

    # ------------------------------------------------------------------ handling

    def _handle(self, request: _Request) -> _Response:
        """Authenticate, then route the request to its endpoint."""
        if not self._authorized(request.authorization):
            return _error(401, "Invalid API Key provided.")
        method, path = request.method, request.path
        parts = path.split("/")
        if method == "GET" and path == "/v1/balance":
            return self._balance(request)
        if method == "GET" and path == "/v1/customers":
            return self._list_customers(request)
        if method == "GET" and path == "/v1/charges":
            return self._list_charges(request)
        if method == "POST" and path == "/v1/refunds":
            return self._create_refund(request)
        if method == "GET" and len(parts) == 4 and parts[:2] == ["", "v1"] and parts[3]:
            object_id = unquote(parts[3])
            if parts[2] == "charges":
                return self._retrieve(request, self.charges, "charge", object_id)
            if parts[2] == "refunds":
                return self._retrieve(request, self.refunds, "refund", object_id)
        return _error(404, f"Unrecognized request URL ({method}: {path}).")

    def _authorized(self, header: str | None) -> bool:
        """Whether the Authorization header is ``Bearer <the secret key>``."""
        if header is None:
            return False
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return secrets.compare_digest(
            token.strip().encode("utf-8"), self._secret_key.encode("utf-8")
        )

    def _balance(self, request: _Request) -> _Response:
        """``GET /v1/balance``: the app's health check; fails on ``fail_health``."""
        if self.fail_health:
            return _error(
                500,
                "The fake Stripe server was told to fail its health check.",
                error_type="api_error",
            )
        rejected = _unknown_params(request.query, frozenset())
        if rejected is not None:
            return rejected
        return _json(
            200,
            {
                "object": "balance",
                "available": [{"amount": 0, "currency": "eur"}],
                "pending": [],
                "livemode": False,
            },
        )

    def _list_customers(self, request: _Request) -> _Response:
        """``GET /v1/customers``, filtered by exact email ignoring case."""
        allowed = frozenset({"email", "limit", "starting_after"})
        rejected = _unknown_params(request.query, allowed)
        if rejected is not None:
            return rejected
        email = _single(request.query, "email")
        if isinstance(email, _Response):
            return email
        with self._lock:
            found = [
                customer
                for customer in self.customers.values()
                if email is None or customer["email"].casefold() == email.casefold()
            ]
            return self._list_page("/v1/customers", found, request.query)

    def _list_charges(self, request: _Request) -> _Response:
        """``GET /v1/charges``, optionally only one customer's charges."""
        allowed = frozenset({"customer", "limit", "starting_after"})
        rejected = _unknown_params(request.query, allowed)
        if rejected is not None:
            return rejected
        customer = _single(request.query, "customer")
        if isinstance(customer, _Response):
            return customer
        with self._lock:
            found = [
                charge
                for charge in self.charges.values()
                if customer is None or charge["customer"] == customer
            ]
            return self._list_page("/v1/charges", found, request.query)

    def _list_page(
        self, url: str, items: list[dict[str, Any]], query: Params
    ) -> _Response:
        """One page of a Stripe list object, newest first, honouring ``limit``.

        ``starting_after`` is supported so that a client that pages through
        ``has_more`` works as it would against Stripe.
        """
        limit = _DEFAULT_LIMIT
        raw_limit = _single(query, "limit")
        if isinstance(raw_limit, _Response):
            return raw_limit
        if raw_limit is not None:
            parsed = _parse_int(raw_limit)
            if parsed is None:
                return _error(400, f"Invalid integer: {raw_limit}", param="limit")
            if not 1 <= parsed <= _MAX_LIMIT:
                return _error(
                    400,
                    f"This value must be between 1 and {_MAX_LIMIT}.",
                    param="limit",
                )
            limit = parsed
        ordered = sorted(
            items,
            key=lambda item: (item["created"], self._order[item["id"]]),
            reverse=True,
        )
        after = _single(query, "starting_after")
        if isinstance(after, _Response):
            return after
        if after is not None:
            ids = [item["id"] for item in ordered]
            if after not in ids:
                return _missing("object", after, "starting_after")
            ordered = ordered[ids.index(after) + 1 :]
        return _json(
            200,
            {
                "object": "list",
                "url": url,
                "has_more": len(ordered) > limit,
                "data": ordered[:limit],
            },
        )

    def _retrieve(
        self,
        request: _Request,
        store: dict[str, dict[str, Any]],
        kind: str,
        object_id: str,
    ) -> _Response:
        """``GET /v1/<kind>s/<id>``: the stored object or a resource_missing 404."""
        rejected = _unknown_params(request.query, frozenset())
        if rejected is not None:
            return rejected
        with self._lock:
            found = store.get(object_id)
            if found is None:
                return _missing(kind, object_id, "id")
            return _json(200, found)

    def _create_refund(self, request: _Request) -> _Response:
        """``POST /v1/refunds`` with Stripe's idempotency-key semantics.

        A key already used with the same parameters gets the stored status and
        body back, marked ``Idempotent-Replayed: true``; with other parameters it
        gets an idempotency_error. As Stripe documents, a result is stored only
        once the endpoint started working: malformed parameters (missing charge,
        non-integer amount, unknown parameter) are answered but not remembered,
        while a missing charge or an amount above what is left is.

        The refund is created and its result remembered before any
        ``delay_after_refund`` sleep, so a client that timed out and retries with
        the same key finds the refund already made.
        """
        key = request.idempotency_key
        with self._lock:
            if key is not None:
                previous = self._idempotency.get(key)
                if previous is not None:
                    return self._replay(previous, request)
            response, remember, created = self._refund_locked(request.form)
            if key is not None and remember:
                self._idempotency[key] = _IdempotentResult(
                    method=request.method,
                    path=request.path,
                    params=dict(request.form),
                    status=response.status,
                    body=response.body,
                )
            if created:
                response.delay = max(0.0, float(self.delay_after_refund))
        return response

    def _replay(self, previous: _IdempotentResult, request: _Request) -> _Response:
        """The stored answer for a reused key, or a 400 if the request differs."""
        same = (
            previous.method == request.method
            and previous.path == request.path
            and previous.params == request.form
        )
        if not same:
            return _error(
                400,
                "Keys for idempotent requests can only be used with the same "
                "parameters they were first used with.",
                error_type="idempotency_error",
            )
        return _Response(
            previous.status, previous.body, {"Idempotent-Replayed": "true"}
        )

    def _refund_locked(self, form: Params) -> tuple[_Response, bool, bool]:
        """Validate and make a refund; the caller holds ``_lock``.

        Returns the response, whether an idempotency key may remember it, and
        whether a refund was created (which is when the configured delay applies).
        """
        allowed = frozenset({"charge", "amount", "reason", "metadata"})
        rejected = _unknown_params(form, allowed)
        if rejected is not None:
            return rejected, False, False
        charge_id = _single(form, "charge")
        if isinstance(charge_id, _Response):
            return charge_id, False, False
        if not charge_id:
            message = "Missing required param: charge."
            return _error(400, message, param="charge"), False, False
        raw_amount = _single(form, "amount")
        if isinstance(raw_amount, _Response):
            return raw_amount, False, False
        amount: int | None = None
        if raw_amount is not None:
            amount = _parse_int(raw_amount)
            if amount is None:
                message = f"Invalid integer: {raw_amount}"
                return _error(400, message, param="amount"), False, False
            if amount < 1:
                message = "This value must be greater than or equal to 1."
                return _error(400, message, param="amount"), False, False
        reason = _single(form, "reason")
        if isinstance(reason, _Response):
            return reason, False, False
        if reason is not None and reason not in _REFUND_REASONS:
            choices = ", ".join(sorted(_REFUND_REASONS))
            message = f"Invalid reason: must be one of {choices}"
            return _error(400, message, param="reason"), False, False
        metadata: dict[str, str] = {}
        for name, value in form.items():
            if name.startswith("metadata[") and name.endswith("]"):
                if isinstance(value, list):
                    return _error(400, "Invalid metadata.", param=name), False, False
                metadata[name[len("metadata[") : -1]] = value

        charge = self.charges.get(charge_id)
        if charge is None:
            return _missing("charge", charge_id, "charge"), True, False
        currency = charge["currency"]
        remaining = charge["amount"] - charge["amount_refunded"]
        if remaining <= 0:
            response = _error(
                400,
                f"Charge {charge_id} has already been refunded.",
                code="charge_already_refunded",
            )
            return response, True, False
        if amount is None:
            amount = remaining
        if amount > remaining:
            message = (
                f"Refund amount ({_format_money(amount, currency)}) is greater "
                f"than unrefunded amount on charge "
                f"({_format_money(remaining, currency)})"
            )
            return _error(400, message, param="amount"), True, False

        refund = {
            "id": _new_id("re"),
            "object": "refund",
            "amount": amount,
            "charge": charge_id,
            "currency": currency,
            "status": "succeeded",
            "created": _now(),
            "reason": reason,
            "metadata": metadata,
        }
        if not self.forget_refunds:
            self.refunds[refund["id"]] = refund
            charge["amount_refunded"] += amount
            charge["refunded"] = charge["amount_refunded"] == charge["amount"]
            return _json(200, refund), True, True
        # A refund that is answered but leaves no trace: no stored refund, no
        # change to the charge, and no idempotent result to replay.
        return _json(200, refund), False, True


@contextmanager
def running_fake_stripe(secret_key: str) -> Iterator[FakeStripe]:
    """A started :class:`FakeStripe` for a ``with`` block or a yield fixture."""
    from django.conf import settings
    from django.test import override_settings

    fake = FakeStripe(secret_key=secret_key)
    fake.start()
    # The operator's list of Stripe addresses names the fake, as DESIGN.md's
    # STRIPE_API_BASES says tests do: no other address gets the key.
    listed = override_settings(
        STRIPE_API_BASES=[*settings.STRIPE_API_BASES, fake.base_url]
    )
    try:
        with listed:
            yield fake
    finally:
        fake.stop()
