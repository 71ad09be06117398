"""Stripe's wire format as the fake serves it: ids, form and query parameters,
amounts in error messages, and the JSON answers and error envelopes.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

import json
import secrets
import string
import time
from dataclasses import dataclass, field
from typing import Any, TypeAlias
from urllib.parse import parse_qsl

Params: TypeAlias = dict[str, str | list[str]]
"""Decoded query or form parameters; a key sent more than once maps to a list."""

_ID_ALPHABET = string.ascii_letters + string.digits
_ID_LENGTH = 14

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
