"""One step of the model, streamed: its text as it comes, the verdict in front,
retried a bounded number of times on a provider's passing troubles (``agents.turn``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from agents.providers.base import (
    ModelRequest,
    Provider,
    ProviderError,
    StepDone,
    TextDelta,
)
from gymnasia.text import storable_text

Emit = Callable[[str, dict[str, Any]], Awaitable[None]]
MAX_PROVIDER_ATTEMPTS = 3
RETRYABLE = ("rate_limited", "overloaded", "unavailable")


async def ignore(name: str, data: dict[str, Any]) -> None:
    """An ``Emit`` for a turn nobody streams."""
    return None


async def stream_step(
    provider: Provider, request: ModelRequest, prefix: str, emit: Emit
) -> StepDone:
    """One step, retried on transient provider errors; the verdict leads its text."""
    for attempt in range(1, MAX_PROVIDER_ATTEMPTS + 1):
        streamed = False
        if prefix:
            await emit("delta", {"text": prefix})
            streamed = True
        try:
            async with aclosing(provider.stream(request)) as events:
                # What the model writes is stored and read as it came, except for
                # characters no database column takes (NUL, lone surrogates).
                async for event in events:
                    if isinstance(event, TextDelta) and event.text:
                        await emit("delta", {"text": storable_text(event.text)})
                        streamed = True
                    elif isinstance(event, StepDone):
                        text = storable_text(event.text)
                        if not event.tool_calls and not text.strip():
                            # Nothing to show nor to run: no answer, not a reply.
                            raise ProviderError(
                                "cut_off",
                                "the provider's step had neither text nor calls",
                            )
                        return replace(event, text=text)
            raise ProviderError(
                "cut_off", "the provider ended the step without finishing it"
            )
        except ProviderError as error:
            if streamed:
                await emit("discard", {})
            if error.kind not in RETRYABLE or attempt == MAX_PROVIDER_ATTEMPTS:
                raise
            wait = (
                error.retry_after
                if error.retry_after is not None
                else 0.5 * 2 ** (attempt - 1)
            )
            await asyncio.sleep(min(max(wait, 0.0), 4.0))
    raise ProviderError("unavailable", "no attempt left")  # pragma: no cover
