"""Mindbody Public API v6's wire format as the fake serves it: the request the
handlers see, JSON answers, the ``{"Error": {"Message", "Code"}}`` envelope,
the ``request.<name>`` query parameters, paging and date-times.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any, TypeAlias
from zoneinfo import ZoneInfo

Query: TypeAlias = dict[str, list[str]]
"""Decoded query parameters; every name maps to the list of its values."""

DEFAULT_LIMIT = 100
MAX_LIMIT = 200
PAGING = frozenset({"request.limit", "request.offset"})


class Refusal(Exception):
    """An answer that ends a handler early (a 4xx error, usually)."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


@dataclass
class Response:
    """What the listener writes back.

    ``delay`` is slept before writing, outside every lock. ``lost`` means the
    connection is closed with nothing written (a response lost after the
    effect was made).
    """

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    lost: bool = False


@dataclass
class Request:
    """The parts of an HTTP request the fake's logic looks at.

    ``path`` is relative to the API base (``/class/classes``); ``body`` is the
    decoded JSON body, or None when there was none; ``body_error`` says why a
    body could not be decoded.
    """

    method: str
    path: str
    query: Query
    headers: dict[str, str]
    body: Any
    body_error: str | None = None

    def header(self, name: str) -> str | None:
        """A header's value by case-insensitive name, or None."""
        return self.headers.get(name.lower())


def json_response(status: int, payload: Any) -> Response:
    """A JSON answer as Mindbody sends it (PascalCase bodies, UTF-8)."""
    return Response(status, json.dumps(payload).encode("utf-8"))


def error(status: int, code: str, message: str) -> Response:
    """Mindbody's error envelope: ``{"Error": {"Message": ..., "Code": ...}}``."""
    return json_response(status, {"Error": {"Message": message, "Code": code}})


def invalid(message: str) -> Refusal:
    """A 400 ``InvalidParameter`` refusal, raised by parameter checks."""
    return Refusal(error(400, "InvalidParameter", message))


def ok(payload: dict[str, Any]) -> Response:
    """A 200 with ``payload``."""
    return json_response(200, payload)


def json_body(request: Request, types: dict[str, type | tuple[type, ...]]) -> dict:
    """The JSON object body, every field one the document names, of its type.

    ``None`` is accepted for any field (JSON null: the field left out).
    """
    if request.body_error is not None:
        raise invalid(request.body_error)
    body = request.body
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object.")
    for name, value in body.items():
        expected = types.get(name)
        if expected is None:
            raise invalid(f"The field '{name}' is not accepted here.")
        if value is None:
            continue
        allowed = expected if isinstance(expected, tuple) else (expected,)
        wrong_bool = isinstance(value, bool) and bool not in allowed
        if wrong_bool or not isinstance(value, allowed):
            raise invalid(f"The value of '{name}' is not valid.")
    return body


# ------------------------------------------------------------------ query params


def check_names(query: Query, allowed: frozenset[str]) -> None:
    """Refuse a query parameter the endpoint's document does not name.

    Mindbody itself ignores unknown names; refusing them here makes a misspelt
    or mis-cased parameter (``StartDateTime`` for ``request.startDateTime``)
    fail loudly instead of being silently dropped.
    """
    for name in query:
        if name not in allowed:
            raise invalid(f"The query parameter '{name}' is not accepted here.")


def single(query: Query, name: str) -> str | None:
    """The one value of ``name``; a parameter sent twice is refused."""
    values = query.get(name)
    if not values:
        return None
    if len(values) > 1:
        raise invalid(f"The parameter '{name}' was given more than once.")
    return values[0]


def integer(text: str, name: str) -> int:
    """``text`` as an integer, or a refusal naming the parameter."""
    digits = text[1:] if text.startswith("-") else text
    if not digits.isascii() or not digits.isdigit():
        raise invalid(f"The value '{text}' is not valid for {name}.")
    return int(text)


def int_param(query: Query, name: str) -> int | None:
    """An optional integer query parameter."""
    value = single(query, name)
    return None if value is None else integer(value, name)


def int_list(query: Query, name: str) -> list[int]:
    """An array of integers, passed as the name repeated (``multi``)."""
    return [integer(value, name) for value in query.get(name, [])]


def bool_param(query: Query, name: str) -> bool | None:
    """An optional boolean query parameter (``true`` or ``false``)."""
    value = single(query, name)
    if value is None:
        return None
    lowered = value.lower()
    if lowered not in ("true", "false"):
        raise invalid(f"The value '{value}' is not valid for {name}.")
    return lowered == "true"


def datetime_param(query: Query, name: str, zone: ZoneInfo) -> datetime | None:
    """An optional date-time, aware; one without an offset is site-local.

    A bare date means midnight at the site.
    """
    value = single(query, name)
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(value), time())
        except ValueError:
            raise invalid(f"The value '{value}' is not valid for {name}.") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)
    return parsed


# ------------------------------------------------------------------ paging


@dataclass(frozen=True)
class Page:
    """``request.limit`` and ``request.offset`` as the fake applies them."""

    limit: int
    offset: int

    def cut(self, items: list[Any]) -> tuple[list[Any], dict[str, int]]:
        """The items of this page and the ``PaginationResponse`` describing it."""
        chosen = items[self.offset : self.offset + self.limit]
        return chosen, {
            "RequestedLimit": self.limit,
            "RequestedOffset": self.offset,
            "PageSize": len(chosen),
            "TotalResults": len(items),
        }


def page(query: Query) -> Page:
    """The page asked for: ``limit`` defaults to 100 and is capped at 200;
    ``offset`` counts records to skip and defaults to 0."""
    limit = int_param(query, "request.limit")
    offset = int_param(query, "request.offset")
    if limit is None:
        limit = DEFAULT_LIMIT
    if limit < 1:
        raise invalid("request.limit must be greater than 0.")
    if offset is None:
        offset = 0
    if offset < 0:
        raise invalid("request.offset must not be negative.")
    return Page(limit=min(limit, MAX_LIMIT), offset=offset)


# ------------------------------------------------------------------ date-times


def wire_datetime(moment: datetime | None, zone: ZoneInfo, style: str) -> str | None:
    """A date-time as served: site-local without an offset (``"local"``), or
    UTC with a ``Z`` (``"utc"``)."""
    if moment is None:
        return None
    if style == "utc":
        utc = moment.astimezone(ZoneInfo("UTC")).replace(tzinfo=None)
        return utc.isoformat(timespec="seconds") + "Z"
    local = moment.astimezone(zone).replace(tzinfo=None)
    return local.isoformat(timespec="seconds")


def wire_date(day: date | None) -> str | None:
    """A date field (contracts, memberships): midnight, without an offset."""
    if day is None:
        return None
    return datetime.combine(day, time()).isoformat(timespec="seconds")
