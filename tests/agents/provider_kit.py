"""What the provider tests share: the tools offered, and running a step through a
real adapter against the local fake (``tests.fakes.llm_server``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from agents.providers.anthropic import AnthropicProvider
from agents.providers.base import (
    HistoryItem,
    ModelRequest,
    Provider,
    ProviderError,
    ProviderEvent,
    StepDone,
    TextDelta,
)
from agents.providers.google import GoogleProvider
from agents.providers.openai import OpenAIProvider
from tests.fakes.llm_server import FakeLLM
from tools.types import ToolSpec

API_KEY = "sk-test-secret-key-0123456789"
PROVIDERS = ("openai", "anthropic", "google")
MODELS = {"openai": "gpt-test", "anthropic": "claude-test", "google": "gemini-test"}
INSTRUCTIONS = "You are the gym's assistant."

WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "units": {"type": "string", "enum": ["c", "f"]},
        },
        "required": ["city"],
    },
)
CLASSES = ToolSpec(
    name="search_classes",
    description="Classes on a given day.",
    parameters={
        "type": "object",
        "properties": {"day": {"type": "string", "format": "date"}},
    },
)
TOOLS = (WEATHER, CLASSES)
#: A weather tool's result, as the tests send it back.
PAYLOAD = {"status": "ok", "temp_c": 21, "note": "soleado"}


def make_provider(
    name: str, base_url: str, *, streaming: bool = True, timeout: float = 5.0
) -> OpenAIProvider | AnthropicProvider | GoogleProvider:
    model = MODELS[name]
    if name == "openai":
        return OpenAIProvider(
            api_key=API_KEY,
            model=model,
            base_url=base_url + "/v1",
            timeout=timeout,
            streaming=streaming,
        )
    if name == "anthropic":
        return AnthropicProvider(
            api_key=API_KEY,
            model=model,
            base_url=base_url,
            timeout=timeout,
            streaming=streaming,
        )
    return GoogleProvider(
        api_key=API_KEY,
        model=model,
        base_url=base_url,
        timeout=timeout,
        streaming=streaming,
    )


@asynccontextmanager
async def open_provider(
    name: str, base_url: str, *, streaming: bool = True, timeout: float = 5.0
) -> AsyncIterator[OpenAIProvider | AnthropicProvider | GoogleProvider]:
    provider = make_provider(name, base_url, streaming=streaming, timeout=timeout)
    try:
        yield provider
    finally:
        await provider.aclose()


def request_with(
    *history: HistoryItem, tools: tuple[ToolSpec, ...] = TOOLS
) -> ModelRequest:
    return ModelRequest(instructions=INSTRUCTIONS, history=history, tools=tools)


async def drain(
    provider: Provider, request: ModelRequest, events: list[ProviderEvent]
) -> None:
    """Collect every event into ``events`` (kept when the stream raises)."""
    async for event in provider.stream(request):
        events.append(event)


async def run_step(
    provider: Provider, request: ModelRequest
) -> tuple[list[TextDelta], StepDone]:
    """One step's text deltas and its single, final ``StepDone``."""
    events: list[ProviderEvent] = []
    await drain(provider, request, events)
    done = [event for event in events if isinstance(event, StepDone)]
    assert len(done) == 1
    assert events[-1] is done[0]
    return [event for event in events if isinstance(event, TextDelta)], done[0]


async def expect_failure(
    provider: Provider,
    request: ModelRequest,
    events: list[ProviderEvent] | None = None,
) -> ProviderError:
    """The ``ProviderError`` a step raises; it must never have reached StepDone.
    The events that came before it are left in ``events``."""
    events = [] if events is None else events
    with pytest.raises(ProviderError) as info:
        await drain(provider, request, events)
    assert not any(isinstance(event, StepDone) for event in events)
    assert API_KEY not in str(info.value)
    return info.value


def parsed(arguments: Any) -> Any:
    return json.loads(arguments) if isinstance(arguments, str) else dict(arguments)


def last_body(fake: FakeLLM, provider: str) -> dict[str, Any]:
    return fake.requests[provider][-1].body
