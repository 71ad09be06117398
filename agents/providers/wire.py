"""What the adapters share: their SDK client's lifetime (``SdkProvider``); how
long a provider asks us to wait and error text that is safe to keep (short,
without the key), read off an HTTP answer; and request bodies spliced from
history items encoded once.

A request is laid out for the providers' prompt caches: the instructions and the
tools (in the registry's fixed order) first, then the history, oldest first, so
that each step repeats the last one's request as its prefix. Every piece is JSON
with sorted keys: a step's state read back from the database (PostgreSQL's
``jsonb`` orders keys its own way) encodes to the same bytes as when it was new.
"""

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

import httpx2

from agents.providers.base import (
    ModelRequest,
    ProviderError,
    ProviderEvent,
    StepDone,
    TextDelta,
)
from tools.types import ToolSpec

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
    """``value`` as compact JSON, keys sorted (the same bytes for equal values)."""
    return json_text(value, compact=True).encode()


def json_text(value: Any, *, compact: bool = False) -> str:
    """``value`` as JSON text with its keys sorted: a tool result or arguments
    inside a request, the same text for equal values."""
    separators = (",", ":") if compact else None
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=separators)


def json_body(fields: Mapping[str, Any], lists: Mapping[str, Iterable[bytes]]) -> bytes:
    """The JSON object of ``fields``, then of ``lists``: by name, lists of values
    that are already JSON (empty pieces left out)."""
    body = json_dumps(dict(fields))[:-1]  # without its closing brace
    for name, encoded in lists.items():
        if len(body) > 1:
            body += b","
        body += json_dumps(name) + b":[" + b",".join(p for p in encoded if p) + b"]"
    return body + b"}"


class SdkProvider:
    """What the SDK adapters share: the model, whether to stream, the key (kept to
    redact it from error text) and the SDK's async client, kept for the adapter's
    lifetime and closed with it.

    The client never retries (``max_retries=0``): the turn loop owns retries.
    With ``base_url=None`` the SDK reads its own environment variable, then its
    default. An adapter names its SDK's client class, or builds the client itself
    where the SDK takes other arguments. ``prompt_caching=False`` leaves out what
    asks a provider to cache (Anthropic's breakpoints, OpenAI's cache key): the
    benchmarks' baseline."""

    name: str
    sdk_client: Callable[..., Any]
    #: The SDK's errors, and the transport's that arrive unwrapped mid-stream.
    sdk_errors: tuple[type[Exception], ...]
    #: Those that mean the provider could not be reached, or stopped answering.
    transport_errors: tuple[type[Exception], ...] = (httpx2.HTTPError,)
    #: What any other error of the SDK means, in a few words.
    unusable = "unusable response"

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout: float = 60.0,
        streaming: bool = True,
        http_client: Any | None = None,
        prompt_caching: bool = True,
    ) -> None:
        self.model = model
        self.streaming = streaming
        self.prompt_caching = prompt_caching
        self._api_key = api_key
        self._client = self._client_new(
            api_key=api_key, base_url=base_url, timeout=timeout, http_client=http_client
        )

    def _client_new(
        self, *, api_key: str, base_url: str | None, timeout: float, http_client: Any
    ) -> Any:
        return self.sdk_client(
            api_key=api_key,
            base_url=base_url or None,
            max_retries=0,
            timeout=timeout,
            http_client=http_client,
        )

    async def aclose(self) -> None:
        """Close the SDK client's connection pool."""
        await self._client.close()

    def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent, None]:
        """Stream one step; the SDK's and the transport's errors become
        ``ProviderError``."""
        return sdk_errors_translated(
            self._events(request), self.sdk_errors, self._failure
        )

    async def _events(
        self, request: ModelRequest
    ) -> AsyncGenerator[ProviderEvent, None]:
        """The step's events: streamed, or its whole text then the step."""
        body = self._body(request)
        if not self.streaming:
            step = await self._answered(body)
            if step.text:
                yield TextDelta(step.text)
            yield step
            return
        async with aclosing(self._streamed(body)) as events:
            async for event in events:
                yield event

    def _body(self, request: ModelRequest) -> bytes:
        """The request's wire JSON."""
        raise NotImplementedError

    def _streamed(self, body: bytes) -> AsyncGenerator[ProviderEvent, None]:
        """A streamed step's events; raises when the step did not finish."""
        raise NotImplementedError

    async def _answered(self, body: bytes) -> StepDone:
        """A step asked for without streaming; raises when it did not finish."""
        raise NotImplementedError

    def _failure(self, exc: Exception) -> ProviderError:
        """The neutral error for an SDK or transport exception: an HTTP error
        status by the adapter's reading of it (``_status_failure``), a failure to
        reach the provider as ``unavailable``, anything else as ``cut_off``."""
        detail = redacted(str(exc), self._api_key)
        failure = self._status_failure(exc, detail)
        if failure is not None:
            return failure
        if isinstance(exc, self.transport_errors):
            return ProviderError(
                "unavailable", f"{self.name}: {type(exc).__name__}: {detail}"
            )
        return ProviderError("cut_off", f"{self.name}: {self.unusable}: {detail}")

    def _status_failure(self, exc: Exception, detail: str) -> ProviderError | None:
        """The neutral error for an HTTP error status the SDK raised, or ``None``
        when ``exc`` is not one."""
        raise NotImplementedError

    def _tools_json(
        self, request: ModelRequest, tool_json: Callable[[ToolSpec], bytes]
    ) -> list[bytes]:
        """The offered tools' JSON, each spec encoded once, in the order given."""
        return [encoded_once(spec, self.name, tool_json) for spec in request.tools]

    def _request_body(
        self,
        request: ModelRequest,
        *,
        fields: Mapping[str, Any],
        tools: list[bytes],
        history: tuple[str, Iterable[bytes]],
    ) -> bytes:
        """A step's request body: the model, whether to stream and the adapter's
        ``fields`` (the instructions among them), its tools, then its history
        under ``history``'s name: the parts that repeat from step to step first."""
        lists: dict[str, Iterable[bytes]] = {}
        if tools:
            lists["tools"] = tools
        name, encoded = history
        lists[name] = encoded
        return json_body(
            {"model": request.model or self.model, "stream": self.streaming, **fields},
            lists,
        )
