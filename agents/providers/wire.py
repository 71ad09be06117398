"""What the adapters share: how long a provider asks us to wait and error text that
is safe to keep (short, without the key), read off an HTTP answer; and request
bodies spliced from history items encoded once."""

from __future__ import annotations

import json
from collections.abc import (
    AsyncGenerator,
    Callable,
    Iterable,
    Mapping,
)
from contextlib import aclosing
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, TypeVar, cast

from agents.providers.base import ProviderError, ProviderEvent

T = TypeVar("T")
E = TypeVar("E", bound="Encodable")

MAX_MESSAGE = 300


def status_failure(
    status: int,
    message: str,
    *,
    retry_after: float | None = None,
    overloaded: bool = False,
) -> ProviderError:
    """The neutral error for a provider's HTTP error status: 429 is a rate limit,
    503 or 529 (or the provider saying so) an overload, any other 5xx or 408 an
    unavailable provider, and the rest a refusal (not retried)."""
    if status == 429:
        return ProviderError("rate_limited", message, retry_after=retry_after)
    if status in (503, 529) or overloaded:
        return ProviderError("overloaded", message, retry_after=retry_after)
    if status >= 500 or status == 408:
        return ProviderError("unavailable", message)
    return ProviderError("refused", message)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP
    date); ``None`` when the server did not say."""
    lowered = {str(key).lower(): str(value) for key, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def redacted(text: str, secret: str) -> str:
    """``text`` shortened, with the API key masked should a server echo it."""
    if secret:
        text = text.replace(secret, "***")
    return text[:MAX_MESSAGE]


def json_object(text: str) -> dict[str, Any]:
    """``text`` parsed as a JSON object, or ``{}`` when it is not one."""
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


async def sdk_errors_translated(
    events: AsyncGenerator[ProviderEvent, None],
    errors: tuple[type[Exception], ...],
    failure: Callable[[Exception], ProviderError],
) -> AsyncGenerator[ProviderEvent, None]:
    """The adapter's events, with the SDK's and transport's ``errors`` turned into
    ``ProviderError``. The error is raised outside the ``except`` block so that no
    SDK exception travels along as its context."""
    translated: ProviderError | None = None
    try:
        async with aclosing(events) as stream:
            async for event in stream:
                yield event
    except errors as exc:
        translated = failure(exc)
    if translated is not None:
        raise translated


class Encodable(Protocol):
    """A value whose wire forms are kept on it (history items, tool specs)."""

    @property
    def wire(self) -> dict[str, Any]: ...


def encoded_once(item: E, provider: str, encode: Callable[[E], T]) -> T:
    """``encode(item)`` for ``provider``, computed on the item's first request and
    kept on the item for later requests."""
    if provider not in item.wire:
        item.wire[provider] = encode(item)
    return cast(T, item.wire[provider])


def json_dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def json_body(fields: Mapping[str, Any], lists: Mapping[str, Iterable[bytes]]) -> bytes:
    """The JSON object of ``fields``, then of ``lists``: by name, lists of values
    that are already JSON (empty pieces left out)."""
    body = json_dumps(dict(fields))[:-1]  # without its closing brace
    for name, encoded in lists.items():
        if len(body) > 1:
            body += b","
        body += json_dumps(name) + b":[" + b",".join(p for p in encoded if p) + b"]"
    return body + b"}"
