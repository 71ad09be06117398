"""The provider adapters, through the real SDK clients, against the local fake.

Each test scripts the fake (``tests.fakes.llm_server``), runs one or two steps
through an adapter and checks both sides: the neutral events the adapter yields
and the wire request the SDK actually sent.
"""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.providers.anthropic import AnthropicProvider, _finish_blocks
from agents.providers.base import (
    AssistantStep,
    HistoryItem,
    ModelRequest,
    Provider,
    ProviderError,
    ProviderEvent,
    StepDone,
    TextDelta,
    ToolResults,
    UserText,
)
from agents.providers.google import GoogleProvider
from agents.providers.openai import OpenAIProvider
from tests.fakes.llm_server import FakeLLM, Step, running_fake_llm
from tools.types import ToolCall, ToolResult, ToolSpec

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


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeLLM]:
    with running_fake_llm() as fake:
        yield fake


@pytest.fixture
def fake(fake_server: FakeLLM) -> FakeLLM:
    """The shared fake, with no scripts and no recorded requests."""
    fake_server.reset()
    return fake_server


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


def offered_tools(provider: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools of a wire request, in one shape for every provider."""
    if provider == "openai":
        assert all(
            t["type"] == "function" and t["strict"] is False for t in body["tools"]
        )
        return [
            {
                "name": t["name"],
                "description": t["description"],
                "schema": t["parameters"],
            }
            for t in body["tools"]
        ]
    if provider == "anthropic":
        return [
            {
                "name": t["name"],
                "description": t["description"],
                "schema": t["input_schema"],
            }
            for t in body["tools"]
        ]
    (tool,) = body["tools"]
    return [
        {
            "name": d["name"],
            "description": d["description"],
            "schema": d["parameters_json_schema"],
        }
        for d in tool["functionDeclarations"]
    ]


def instructions_of(provider: str, body: dict[str, Any]) -> str:
    if provider == "openai":
        return str(body["instructions"])
    if provider == "anthropic":
        return str(body["system"])
    return "".join(part["text"] for part in body["systemInstruction"]["parts"])


# --- requests and text -------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_request_offers_exactly_the_tools_with_their_schemas(
    fake: FakeLLM, provider_name: str, streaming: bool
) -> None:
    fake.script(provider_name, [Step(text="Hello!")])
    async with open_provider(provider_name, fake.base_url, streaming=streaming) as p:
        await run_step(p, request_with(UserText("hi")))

    (record,) = fake.requests[provider_name]
    assert offered_tools(provider_name, record.body) == [
        {"name": s.name, "description": s.description, "schema": dict(s.parameters)}
        for s in TOOLS
    ]
    assert instructions_of(provider_name, record.body) == INSTRUCTIONS
    assert API_KEY not in json.dumps(record.headers)
    if provider_name == "google":
        assert record.path.endswith(
            ":streamGenerateContent?alt=sse" if streaming else ":generateContent"
        )
        assert "/models/gemini-test:" in record.path
        assert record.headers["x-goog-api-key"] == "<redacted>"
    else:
        assert bool(record.body.get("stream")) is streaming
        assert record.body["model"] == MODELS[provider_name]
        assert record.headers["authorization"] == "<redacted>"


@pytest.mark.anyio
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_no_tools_means_no_tools_field(fake: FakeLLM, provider_name: str) -> None:
    fake.script(provider_name, [Step(text="ok")])
    async with open_provider(provider_name, fake.base_url) as p:
        await run_step(p, request_with(UserText("hi"), tools=()))
    assert "tools" not in last_body(fake, provider_name)


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_text_deltas_concatenate_to_the_step_text(
    fake: FakeLLM, provider_name: str, streaming: bool
) -> None:
    text = "Tomorrow's spinning class starts at 07:30, ¡nos vemos!"
    fake.script(provider_name, [Step(text=text, chunk=5)])
    async with open_provider(provider_name, fake.base_url, streaming=streaming) as p:
        deltas, done = await run_step(p, request_with(UserText("when?")))

    assert "".join(d.text for d in deltas) == done.text == text
    assert done.tool_calls == ()
    assert provider_name in done.provider_state
    if streaming:
        assert len(deltas) > 1
    if provider_name == "google":
        # Streamed pieces are folded into one part for the history.
        assert done.provider_state["google"]["content"]["parts"] == [{"text": text}]


# --- tool calls --------------------------------------------------------------

PAYLOAD = {"status": "ok", "temp_c": 21, "note": "soleado"}


def result_in_second_request(
    provider: str, body: dict[str, Any], call_id: str, state: Any
) -> None:
    """The second request carries the echoed step and the result under its id,
    in the provider's own format."""
    output = json.dumps(PAYLOAD, ensure_ascii=False)
    if provider == "openai":
        echoed = state["output"]
        assert body["input"][1 : 1 + len(echoed)] == echoed
        assert body["input"][-1] == {
            "type": "function_call_output",
            "call_id": call_id,
            "output": output,
        }
    elif provider == "anthropic":
        assert body["messages"][1] == {"role": "assistant", "content": state["content"]}
        assert body["messages"][-1] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": output,
                    "is_error": False,
                }
            ],
        }
    else:
        model_content = body["contents"][1]
        assert model_content["role"] == "model"
        (call_part,) = [p for p in model_content["parts"] if "functionCall" in p]
        assert call_part["functionCall"]["id"] == call_id
        # The thought signature the fake attached survives the round trip.
        assert call_part["thoughtSignature"] == "c2lnLWNhbGxfMQ=="
        assert body["contents"][-1] == {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": call_id,
                        "name": "get_weather",
                        "response": {"output": PAYLOAD},
                    }
                }
            ],
        }


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_two_step_exchange_returns_the_result_under_its_call_id(
    fake: FakeLLM, provider_name: str, streaming: bool
) -> None:
    fake.script(
        provider_name,
        [
            Step(
                text="Let me check.",
                tool_calls=[("call_1", "get_weather", {"city": "Paris"})],
            ),
            Step(text="It is 21 °C in Paris."),
        ],
    )
    question = UserText("weather in Paris?")
    async with open_provider(provider_name, fake.base_url, streaming=streaming) as p:
        _, first = await run_step(p, request_with(question))
        (call,) = first.tool_calls
        assert (call.id, call.name, parsed(call.arguments)) == (
            "call_1",
            "get_weather",
            {"city": "Paris"},
        )
        history = (
            question,
            AssistantStep(first.text, first.tool_calls, first.provider_state),
            ToolResults((ToolResult("call_1", "ok", PAYLOAD, is_error=False),)),
        )
        _, second = await run_step(p, request_with(*history))

    assert second.text == "It is 21 °C in Paris."
    assert second.tool_calls == ()
    _, second_body = (r.body for r in fake.requests[provider_name])
    result_in_second_request(
        provider_name, second_body, "call_1", first.provider_state[provider_name]
    )
    # The provider state is JSON-able: it may be stored between turns.
    json.dumps(dict(first.provider_state))


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_two_parallel_tool_calls_in_one_step(
    fake: FakeLLM, provider_name: str, streaming: bool
) -> None:
    calls = [
        ("call_a", "get_weather", {"city": "Madrid", "units": "c"}),
        ("call_b", "search_classes", {"day": "2026-12-01"}),
    ]
    fake.script(provider_name, [Step(tool_calls=calls, chunk=3), Step(text="Done.")])
    question = UserText("weather and classes?")
    async with open_provider(provider_name, fake.base_url, streaming=streaming) as p:
        _, first = await run_step(p, request_with(question))
        assert [(c.id, c.name, parsed(c.arguments)) for c in first.tool_calls] == calls
        results = (
            ToolResult("call_a", "ok", {"temp_c": 12}, is_error=False),
            ToolResult("call_b", "not_found", {"status": "not_found"}, is_error=True),
        )
        history = (
            question,
            AssistantStep(first.text, first.tool_calls, first.provider_state),
            ToolResults(results),
        )
        await run_step(p, request_with(*history))

    body = last_body(fake, provider_name)
    if provider_name == "openai":
        outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
        assert [(o["call_id"], json.loads(o["output"])) for o in outputs] == [
            ("call_a", {"temp_c": 12}),
            ("call_b", {"status": "not_found"}),
        ]
    elif provider_name == "anthropic":
        *_, assistant, user = body["messages"]
        assert assistant["role"] == "assistant"
        assert [b["id"] for b in assistant["content"] if b["type"] == "tool_use"] == [
            "call_a",
            "call_b",
        ]
        assert user["role"] == "user"
        assert [(b["tool_use_id"], b["is_error"]) for b in user["content"]] == [
            ("call_a", False),
            ("call_b", True),
        ]
    else:
        (last,) = body["contents"][-1:]
        assert [p["functionResponse"] for p in last["parts"]] == [
            {
                "id": "call_a",
                "name": "get_weather",
                "response": {"output": {"temp_c": 12}},
            },
            {
                "id": "call_b",
                "name": "search_classes",
                "response": {"error": {"status": "not_found"}},
            },
        ]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("provider_name", "streaming"),
    [("openai", True), ("openai", False), ("anthropic", True)],
)
async def test_malformed_arguments_reach_the_tool_call_unchanged(
    fake: FakeLLM, provider_name: str, streaming: bool
) -> None:
    broken = '{"city": "Par'
    fake.script(provider_name, [Step(tool_calls=[("call_x", "get_weather", broken)])])
    async with open_provider(provider_name, fake.base_url, streaming=streaming) as p:
        _, done = await run_step(p, request_with(UserText("weather?")))
    assert done.tool_calls == (ToolCall("call_x", "get_weather", broken),)
    json.dumps(dict(done.provider_state))


@pytest.mark.anyio
async def test_google_call_without_id_gets_name_and_index(fake: FakeLLM) -> None:
    def answer(body: dict[str, Any]) -> Step:
        return Step(tool_calls=[("", "get_weather", {"city": "Lima"})])

    fake.script("google", answer)
    async with open_provider("google", fake.base_url) as p:
        _, done = await run_step(p, request_with(UserText("weather?")))
    assert done.tool_calls == (
        ToolCall("get_weather-0", "get_weather", {"city": "Lima"}),
    )


def test_anthropic_tool_input_given_whole_is_passed_as_an_object() -> None:
    blocks = {
        0: {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
        1: {
            "type": "tool_use",
            "id": "toolu_2",
            "name": "get_weather",
            "input": {"city": "Bern"},
        },
    }
    content, calls = _finish_blocks(blocks, {})
    assert calls == (
        ToolCall("toolu_1", "get_weather", {}),
        ToolCall("toolu_2", "get_weather", {"city": "Bern"}),
    )
    assert [block["input"] for block in content] == [{}, {"city": "Bern"}]


def test_anthropic_spend_limit_is_refused_not_rate_limited() -> None:
    provider = AnthropicProvider(api_key=API_KEY, model="claude-test")
    body = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "spend limit reached",
            "details": {"error_code": "enforced_spend_limit_reached"},
        },
    }
    response = httpx2.Response(
        429,
        headers={"retry-after": "60"},
        request=httpx2.Request("POST", "http://127.0.0.1/v1/messages"),
    )
    exc = anthropic.EnforcedSpendLimitReachedError(
        "spend", response=response, body=body
    )
    assert isinstance(exc, anthropic.RateLimitError)
    assert provider._failure(exc).kind == "refused"


# --- switching providers -----------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("first_name", "second_name"),
    [(a, b) for a in PROVIDERS for b in PROVIDERS if a != b],
)
async def test_switching_providers_rebuilds_the_other_providers_step(
    fake: FakeLLM, first_name: str, second_name: str
) -> None:
    fake.script(
        first_name,
        [
            Step(
                text="Checking.",
                tool_calls=[("call_1", "get_weather", {"city": "Quito"})],
            )
        ],
    )
    fake.script(second_name, [Step(text="It is sunny.")])
    question = UserText("weather in Quito?")
    async with open_provider(first_name, fake.base_url) as first_provider:
        _, first = await run_step(first_provider, request_with(question))
    assert set(first.provider_state) == {first_name}

    history = (
        question,
        AssistantStep(first.text, first.tool_calls, first.provider_state),
        ToolResults((ToolResult("call_1", "ok", PAYLOAD, is_error=False),)),
    )
    async with open_provider(second_name, fake.base_url) as second_provider:
        _, second = await run_step(second_provider, request_with(*history))
    assert second.text == "It is sunny."

    body = last_body(fake, second_name)
    output = json.dumps(PAYLOAD, ensure_ascii=False)
    if second_name == "openai":
        assert body["input"] == [
            {"role": "user", "content": "weather in Quito?"},
            {"role": "assistant", "content": "Checking."},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": json.dumps({"city": "Quito"})
                if not isinstance(first.tool_calls[0].arguments, str)
                else first.tool_calls[0].arguments,
            },
            {"type": "function_call_output", "call_id": "call_1", "output": output},
        ]
    elif second_name == "anthropic":
        assert body["messages"] == [
            {
                "role": "user",
                "content": [{"type": "text", "text": "weather in Quito?"}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "get_weather",
                        "input": {"city": "Quito"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "content": output,
                        "is_error": False,
                    }
                ],
            },
        ]
    else:
        user, model, results = body["contents"]
        assert user == {"role": "user", "parts": [{"text": "weather in Quito?"}]}
        assert model["role"] == "model"
        assert model["parts"][0] == {"text": "Checking."}
        assert model["parts"][1]["functionCall"] == {
            "id": "call_1",
            "name": "get_weather",
            "args": {"city": "Quito"},
        }
        # Google's stand-in signature for calls Gemini did not make.
        assert (
            model["parts"][1]["thoughtSignature"] == "skip_thought_signature_validator"
        )
        assert results["parts"][0]["functionResponse"] == {
            "id": "call_1",
            "name": "get_weather",
            "response": {"output": PAYLOAD},
        }


@pytest.mark.anyio
async def test_anthropic_merges_consecutive_user_items(fake: FakeLLM) -> None:
    fake.script("anthropic", [Step(text="ok")])
    history = (
        UserText("first"),
        AssistantStep("", (ToolCall("call_1", "get_weather", {"city": "Oslo"}),)),
        ToolResults((ToolResult("call_1", "ok", {"temp_c": -3}, is_error=False),)),
        UserText("and tomorrow?"),
    )
    async with open_provider("anthropic", fake.base_url) as p:
        await run_step(p, request_with(*history))
    messages = last_body(fake, "anthropic")["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[-1]["content"]] == ["tool_result", "text"]


@pytest.mark.anyio
@pytest.mark.parametrize("provider_name", ["openai", "anthropic"])
@pytest.mark.parametrize("streaming", [True, False])
async def test_history_items_are_encoded_once_and_sent_as_encoded_afresh(
    fake: FakeLLM, provider_name: str, streaming: bool
) -> None:
    """A turn sends its whole history on every step: each item is encoded on its
    first request and reused after, and what is sent is what encoding the same
    history from scratch sends."""
    fake.script(provider_name, [Step(text="ok")] * 3)
    history = (
        UserText("¿carbohidratos del arroz?"),
        AssistantStep("", (ToolCall("call_1", "get_weather", {"city": "Oslo"}),)),
        ToolResults((ToolResult("call_1", "ok", {"temp_c": -3}, is_error=False),)),
        UserText("and tomorrow?"),
    )
    async with open_provider(provider_name, fake.base_url, streaming=streaming) as p:
        await run_step(p, request_with(*history[:3]))
        encoded = [item.wire[provider_name] for item in history[:3]]
        await run_step(p, request_with(*history))
        assert [item.wire[provider_name] for item in history[:3]] == encoded
        assert all(
            after is before
            for after, before in zip(
                [item.wire[provider_name] for item in history], encoded, strict=False
            )
        )
        afresh = tuple(dataclasses.replace(item, wire={}) for item in history)
        await run_step(p, request_with(*afresh))
    *_, reused, from_scratch = fake.requests[provider_name]
    assert reused.body == from_scratch.body
    assert reused.body["stream"] is streaming


# --- failures ----------------------------------------------------------------

FAULT_KINDS = {
    ("openai", "cut"): "cut_off",
    ("openai", "error"): "cut_off",
    ("openai", "max_tokens"): "cut_off",
    ("anthropic", "cut"): "cut_off",
    ("anthropic", "error"): "overloaded",
    ("anthropic", "max_tokens"): "cut_off",
    ("google", "cut"): "cut_off",
    ("google", "error"): "overloaded",
    ("google", "max_tokens"): "cut_off",
}


@pytest.mark.anyio
@pytest.mark.parametrize(("provider_name", "fault"), sorted(FAULT_KINDS))
async def test_an_unfinished_stream_raises_and_never_finishes_the_step(
    fake: FakeLLM, provider_name: str, fault: str
) -> None:
    fake.script(
        provider_name,
        [
            Step(
                text="Sure, booking it",
                tool_calls=[("call_1", "get_weather", {"city": "Paris"})],
                fault=fault,
            )
        ],
    )
    async with open_provider(provider_name, fake.base_url) as p:
        error = await expect_failure(p, request_with(UserText("book it")))
    assert error.kind == FAULT_KINDS[provider_name, fault]


@pytest.mark.anyio
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_truncated_non_streamed_step_is_cut_off(
    fake: FakeLLM, provider_name: str
) -> None:
    fake.script(
        provider_name,
        [
            Step(
                tool_calls=[("call_1", "get_weather", {"city": "Rome"})],
                fault="max_tokens",
            )
        ],
    )
    async with open_provider(provider_name, fake.base_url, streaming=False) as p:
        error = await expect_failure(p, request_with(UserText("weather?")))
    assert error.kind == "cut_off"


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize("provider_name", PROVIDERS)
@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, "rate_limited"),
        (529, "overloaded"),
        (503, "overloaded"),
        (500, "unavailable"),
        (400, "refused"),
        (401, "refused"),
    ],
)
async def test_http_errors_map_to_neutral_kinds(
    fake: FakeLLM, provider_name: str, streaming: bool, status: int, kind: str
) -> None:
    fake.script(provider_name, [Step(status=status, headers={"retry-after": "7"})])
    async with open_provider(provider_name, fake.base_url, streaming=streaming) as p:
        error = await expect_failure(p, request_with(UserText("hi")))
    assert error.kind == kind
    if kind in ("rate_limited", "overloaded"):
        assert error.retry_after == 7.0
    assert len(fake.requests[provider_name]) == 1  # the SDK did not retry


@pytest.mark.anyio
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_rate_limit_without_retry_after(
    fake: FakeLLM, provider_name: str
) -> None:
    fake.script(provider_name, [Step(status=429)])
    async with open_provider(provider_name, fake.base_url) as p:
        error = await expect_failure(p, request_with(UserText("hi")))
    assert (error.kind, error.retry_after) == ("rate_limited", None)


@pytest.mark.anyio
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_slow_answer_times_out_as_unavailable(
    fake: FakeLLM, provider_name: str
) -> None:
    fake.script(provider_name, [Step(text="late", delay=0.6)])
    async with open_provider(provider_name, fake.base_url, timeout=0.2) as p:
        error = await expect_failure(p, request_with(UserText("hi")))
    assert error.kind == "unavailable"


@pytest.mark.anyio
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_stream_stalling_midway_is_unavailable(
    fake: FakeLLM, provider_name: str
) -> None:
    """A read timeout after the stream started (a raw ``httpx2`` exception for
    Anthropic and Google) is ``unavailable``, and the partial step never ends."""
    fake.script(
        provider_name,
        [
            Step(
                text="Booking",
                tool_calls=[("call_1", "get_weather", {"city": "Paris"})],
                fault="stall",
                delay=0.6,
            )
        ],
    )
    events: list[ProviderEvent] = []
    async with open_provider(provider_name, fake.base_url, timeout=0.2) as p:
        error = await expect_failure(p, request_with(UserText("hi")), events)
    assert error.kind == "unavailable"
    assert events == [TextDelta("Booking")]  # it did fail mid-stream


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_unreachable_server_is_unavailable(
    provider_name: str, streaming: bool
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with open_provider(
        provider_name, f"http://127.0.0.1:{port}", streaming=streaming, timeout=1.0
    ) as p:
        error = await expect_failure(p, request_with(UserText("hi")))
    assert error.kind == "unavailable"


# --- chunking does not matter ------------------------------------------------

json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.text(max_size=12),
)
arguments_strategy = st.dictionaries(
    st.text(min_size=1, max_size=8), json_values, max_size=4
)


@pytest.mark.anyio
@pytest.mark.parametrize("provider_name", ["openai", "anthropic"])
@settings(max_examples=25, deadline=None)
@given(
    arguments=st.lists(arguments_strategy, min_size=1, max_size=2),
    cuts=st.lists(st.integers(min_value=1, max_value=120), max_size=40),
)
async def test_any_chunking_gives_the_same_tool_calls(
    fake_server: FakeLLM,
    provider_name: str,
    arguments: list[dict[str, Any]],
    cuts: list[int],
) -> None:
    """Arguments streamed in pieces cut anywhere (Gemini sends a call whole), one
    call or two parallel ones, reassemble into the same calls."""
    fake_server.reset()
    calls = [(f"call_{i}", "get_weather", a) for i, a in enumerate(arguments)]
    fake_server.script(provider_name, [Step(tool_calls=calls, cuts=tuple(cuts))])
    async with open_provider(provider_name, fake_server.base_url) as p:
        _, done = await run_step(p, request_with(UserText("go")))
    assert done.tool_calls == tuple(
        ToolCall(
            call_id, name, json.dumps(a, separators=(",", ":"), ensure_ascii=False)
        )
        for call_id, name, a in calls
    )
