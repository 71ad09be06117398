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

import errno
import json
import secrets
import socketserver
import string
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeAlias
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["FakeStripe", "running_fake_stripe"]

Params: TypeAlias = dict[str, str | list[str]]
"""Decoded query or form parameters; a key sent more than once maps to a list."""

_HOST = "127.0.0.1"
_ID_ALPHABET = string.ascii_letters + string.digits
_ID_LENGTH = 14
_DEFAULT_LIMIT = 10
_MAX_LIMIT = 100
_REDACTED = "<redacted>"
_FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"
_REFUND_REASONS = frozenset({"duplicate", "fraudulent", "requested_by_customer"})

# How hard a re-opened listener tries to get its old port back.
_BIND_ATTEMPTS = 50
_BIND_RETRY_SECONDS = 0.02

# Symbols for the amounts quoted in refund error messages; other currencies are
# written with their ISO code after the number.
_CURRENCY_SYMBOLS = {"eur": "€", "usd": "$", "gbp": "£"}
_ZERO_DECIMAL_CURRENCIES = frozenset({"jpy", "krw", "vnd", "clp", "isk", "xof"})


def _new_id(prefix: str) -> str:
    """A random Stripe-looking id such as ``ch_`` followed by 14 alphanumerics."""
    suffix = "".join(secrets.choice(_ID_ALPHABET) for _ in range(_ID_LENGTH))
    return f"{prefix}_{suffix}"


def _now() -> int:
    """Unix time in whole seconds, the unit of Stripe's ``created`` fields."""
    return int(time.time())


def _parse_params(text: str) -> Params:
    """Decode a query string or form body, keeping repeated keys as lists."""
    params: Params = {}
    for key, value in parse_qsl(text, keep_blank_values=True):
        existing = params.get(key)
        if existing is None:
            params[key] = value
        elif isinstance(existing, list):
            existing.append(value)
        else:
            params[key] = [existing, value]
    return params


def _parse_int(text: str) -> int | None:
    """The integer written in ``text`` (ASCII digits, optional minus) or None."""
    digits = text[1:] if text.startswith("-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    return int(text)


def _format_money(amount: int, currency: str) -> str:
    """An amount in minor units as a person would read it, e.g. ``€20.00``."""
    if currency in _ZERO_DECIMAL_CURRENCIES:
        number = str(amount)
    else:
        number = f"{amount // 100}.{amount % 100:02d}"
    symbol = _CURRENCY_SYMBOLS.get(currency)
    return f"{symbol}{number}" if symbol else f"{number} {currency.upper()}"


@dataclass
class _Response:
    """What the handler writes back: status, JSON body bytes and extra headers.

    ``delay`` is how long to sleep before writing, outside every lock, so that a
    slow answer never blocks other requests.
    """

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class _Request:
    """The parts of an HTTP request the fake's logic looks at."""

    method: str
    path: str
    query: Params
    form: Params
    authorization: str | None
    idempotency_key: str | None


@dataclass(frozen=True)
class _IdempotentResult:
    """A response remembered under an idempotency key, with what produced it."""

    method: str
    path: str
    params: Params
    status: int
    body: bytes


def _json(status: int, payload: dict[str, Any]) -> _Response:
    """A JSON response, indented as Stripe's own responses are."""
    return _Response(status, json.dumps(payload, indent=2).encode("utf-8"))


def _error(
    status: int,
    message: str,
    *,
    error_type: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
) -> _Response:
    """Stripe's error envelope: ``{"error": {"type", "message", ...}}``."""
    error: dict[str, Any] = {"type": error_type, "message": message}
    if code is not None:
        error["code"] = code
    if param is not None:
        error["param"] = param
    return _json(status, {"error": error})


def _missing(kind: str, object_id: str, param: str) -> _Response:
    """The 404 Stripe gives for an id that names nothing."""
    return _error(
        404,
        f"No such {kind}: '{object_id}'",
        code="resource_missing",
        param=param,
    )


def _unknown_params(params: Params, allowed: frozenset[str]) -> _Response | None:
    """A 400 for the first parameter the endpoint does not take, else None.

    Stripe rejects unknown parameters; doing the same here catches misspelt
    parameter names in the client instead of silently ignoring them.
    """
    for key in params:
        if key in allowed or (key.startswith("metadata[") and "metadata" in allowed):
            continue
        return _error(400, f"Received unknown parameter: {key}", param=key)
    return None


def _single(params: Params, key: str) -> str | _Response | None:
    """The one value of ``key``, None when absent, or a 400 if it came twice."""
    value = params.get(key)
    if isinstance(value, list):
        return _error(400, f"Received more than one value for {key}.", param=key)
    return value


class FakeStripe:
    """An in-memory Stripe account served over HTTP on 127.0.0.1.

    Set-up happens through :meth:`add_customer` and :meth:`add_charge`; the app
    under test then talks HTTP to :attr:`base_url`. Afterwards, :attr:`requests`,
    :meth:`refund_posts` and :attr:`refunds` show what the app actually did.

    Fault modes are plain attributes (``delay_after_refund``, ``forget_refunds``,
    ``fail_health``) read at the moment each request is handled, plus
    :meth:`refuse_for` for a listener that is really gone for a while.

    Connections are closed after every response (HTTP/1.0 style). That is on
    purpose: a client with a pooled keep-alive connection would otherwise keep
    talking to the old socket and never notice :meth:`refuse_for`.
    """

    def __init__(self, *, secret_key: str) -> None:
        """Prepare an empty account that only accepts ``secret_key`` as Bearer."""
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

        # Listener lifecycle, guarded by its own lock.
        self._life_lock = threading.RLock()
        self._server: _Server | None = None
        self._serve_thread: threading.Thread | None = None
        self._port: int | None = None
        self._started = False
        self._stopped = False
        self._generation = 0
        self._reopen_timer: threading.Timer | None = None
        self._refused_until: float | None = None
        self._reopen_error: OSError | None = None
        self._listening = threading.Event()

    # ----------------------------------------------------------------- lifecycle

    @property
    def secret_key(self) -> str:
        """The one key this fake account accepts (for tests that connect to it)."""
        return self._secret_key

    def start(self) -> None:
        """Bind 127.0.0.1 on a port the OS picks and serve from a daemon thread."""
        with self._life_lock:
            if self._started:
                raise RuntimeError("FakeStripe was already started")
            self._started = True
            self._open_server(0)

    def stop(self) -> None:
        """Stop serving for good and release the port; calling it twice is fine.

        If a listener could not be re-opened after :meth:`refuse_for`, the error is
        raised here so that it does not go unnoticed.
        """
        with self._life_lock:
            if self._stopped:
                return
            self._stopped = True
            self._cancel_reopen()
            self._close_server()
            self._refused_until = None
            error = self._reopen_error
        if error is not None:
            raise RuntimeError(
                f"FakeStripe could not listen again on port {self._port}"
            ) from error

    @property
    def port(self) -> int:
        """The TCP port chosen at :meth:`start`; it stays the same until stop."""
        if self._port is None:
            raise RuntimeError("FakeStripe is not started")
        return self._port

    @property
    def base_url(self) -> str:
        """The root URL to configure as Stripe's API base, without a slash."""
        return f"http://{_HOST}:{self.port}"

    def refuse_for(self, seconds: float) -> None:
        """Close the listener now and open it again on the same port later.

        While closed, nothing listens on the port, so the OS refuses new TCP
        connections (ECONNREFUSED): what a client sees when Stripe is unreachable,
        which an HTTP error cannot imitate. Requests already being answered are
        finished. Data is kept. Calling it again while refused restarts the wait.
        """
        if seconds < 0:
            raise ValueError("seconds must not be negative")
        with self._life_lock:
            if not self._started or self._stopped:
                raise RuntimeError("FakeStripe is not running")
            self._cancel_reopen()
            self._close_server()
            self._generation += 1
            self._refused_until = time.monotonic() + seconds
            timer = threading.Timer(seconds, self._reopen, args=(self._generation,))
            timer.name = "fake-stripe-reopen"
            timer.daemon = True
            self._reopen_timer = timer
            timer.start()

    def listen_again(self) -> None:
        """End a refusal now: open the listener on the same port before returning."""
        with self._life_lock:
            if self._refused_until is None:
                return
            self._cancel_reopen()
            self._generation += 1
            self._open_server(self.port)
            self._refused_until = None

    @property
    def refuse_connections_for(self) -> float:
        """Seconds left before the listener comes back; 0.0 while listening.

        Assigning to it is the same as calling :meth:`refuse_for`.
        """
        with self._life_lock:
            if self._refused_until is None:
                return 0.0
            return max(0.0, self._refused_until - time.monotonic())

    @refuse_connections_for.setter
    def refuse_connections_for(self, seconds: float) -> None:
        self.refuse_for(seconds)

    def wait_listening(self, timeout: float = 5.0) -> bool:
        """Block until the listener is open (e.g. after :meth:`refuse_for`).

        Lets a test wait for recovery without guessing a sleep. Returns whether
        the listener is open.
        """
        return self._listening.wait(timeout)

    def _open_server(self, port: int) -> None:
        """Bind a new listener on ``port`` (0: any) and start its serving thread.

        Binding is retried briefly: SO_REUSEADDR lets the port be taken back
        despite connections in TIME_WAIT, but another socket may hold it for a
        moment.
        """
        last_error: OSError | None = None
        for attempt in range(_BIND_ATTEMPTS):
            try:
                server = _Server((_HOST, port), self)
                break
            except OSError as exc:
                if exc.errno not in (errno.EADDRINUSE, errno.EACCES) or port == 0:
                    raise
                last_error = exc
                if attempt + 1 < _BIND_ATTEMPTS:
                    time.sleep(_BIND_RETRY_SECONDS)
        else:
            assert last_error is not None
            raise last_error
        self._server = server
        self._port = server.server_address[1]
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-stripe-{self._port}",
            daemon=True,
        )
        self._serve_thread = thread
        thread.start()
        self._listening.set()

    def _close_server(self) -> None:
        """Stop the serving loop and close the listening socket, if there is one."""
        server, thread = self._server, self._serve_thread
        self._server = None
        self._serve_thread = None
        self._listening.clear()
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def _cancel_reopen(self) -> None:
        """Call off a pending re-open scheduled by :meth:`refuse_for`."""
        if self._reopen_timer is not None:
            self._reopen_timer.cancel()
            self._reopen_timer = None

    def _reopen(self, generation: int) -> None:
        """Timer callback: listen again unless stopped or superseded meanwhile."""
        with self._life_lock:
            if self._stopped or generation != self._generation:
                return
            self._reopen_timer = None
            try:
                self._open_server(self.port)
            except OSError as exc:
                # Kept for stop() to raise: an exception in this thread would only
                # be printed, and tests would just see refusals forever.
                self._reopen_error = exc
                return
            self._refused_until = None

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


class _Server(ThreadingHTTPServer):
    """The listening socket, with one daemon thread per connection.

    ``block_on_close`` is off so that closing the listener (for
    :meth:`FakeStripe.refuse_for` or stop) never waits for a handler that is
    sleeping through ``delay_after_refund``.
    """

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], fake: FakeStripe) -> None:
        self.fake = fake
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse DNS lookup, which can be slow."""
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hung up (e.g. after its read timeout)."""
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """Turns one HTTP request into a :class:`_Request` and writes the answer."""

    server: _Server
    # One request per connection, see FakeStripe's docstring.
    protocol_version = "HTTP/1.0"
    # A client that connects and sends nothing does not hold a thread forever.
    timeout = 10

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def version_string(self) -> str:
        return "nginx"

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request log lines BaseHTTPRequestHandler prints."""

    def _dispatch(self) -> None:
        """Read, record, handle and answer one request."""
        fake = self.server.fake
        split = urlsplit(self.path)
        query = _parse_params(split.query)
        body = self._read_body()
        media_type = self.headers.get("Content-Type", "").split(";")[0]
        form: Params = {}
        if media_type.strip().lower() == _FORM_MEDIA_TYPE:
            form = _parse_params(body.decode("utf-8", errors="replace"))
        headers = {name.lower(): value for name, value in self.headers.items()}
        if "authorization" in headers:
            headers["authorization"] = _REDACTED
        fake._record(
            {
                "method": self.command,
                "path": split.path,
                "query": query,
                "form": form,
                "headers": headers,
            }
        )
        idempotency_key = self.headers.get("Idempotency-Key")
        response = fake._handle(
            _Request(
                method=self.command,
                path=split.path,
                query=query,
                form=form,
                authorization=self.headers.get("Authorization"),
                idempotency_key=idempotency_key,
            )
        )
        if response.delay > 0:
            time.sleep(response.delay)
        extra = dict(response.headers)
        if idempotency_key is not None and self.command == "POST":
            extra["Idempotency-Key"] = idempotency_key
        self._send(response, extra)

    def _read_body(self) -> bytes:
        """The request body, from Content-Length or chunked transfer encoding."""
        encoding = self.headers.get("Transfer-Encoding", "")
        if "chunked" in encoding.lower():
            chunks: list[bytes] = []
            while True:
                size_line = self.rfile.readline(65537).split(b";")[0].strip()
                size = int(size_line or b"0", 16)
                if size == 0:
                    # Skip trailers up to the empty line that ends the body.
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
        length = _parse_int(self.headers.get("Content-Length", "0").strip())
        if not length or length < 0:
            return b""
        return self.rfile.read(length)

    def _send(self, response: _Response, extra: dict[str, str]) -> None:
        """Write status, headers and body; a client that left is not an error."""
        try:
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("Request-Id", _new_id("req"))
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(response.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True


@contextmanager
def running_fake_stripe(secret_key: str) -> Iterator[FakeStripe]:
    """A started :class:`FakeStripe` for a ``with`` block or a yield fixture."""
    fake = FakeStripe(secret_key=secret_key)
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()
