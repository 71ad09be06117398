"""The provider adapters, through the real SDK clients, against the local fake:
what each request carries, and tool calls and results in each provider's format.

Each test scripts the fake (``tests.fakes.llm_server``), runs one or two steps
through an adapter and checks both sides: the neutral events the adapter yields
and the wire request the SDK actually sent.
"""

from __future__ import annotations

import gc
import json
import re
import sys
from typing import Any

import anthropic
import httpx2
import pytest

from agents.providers.anthropic import AnthropicProvider, _finish_blocks
from agents.providers.base import (
    AssistantStep,
    ToolResults,
    UserText,
)
from agents.turn_stream import ignore, stream_step
from tests.agents.provider_kit import (
    API_KEY,
    INSTRUCTIONS,
    MODELS,
    PAYLOAD,
    PROVIDERS,
    TOOLS,
    last_body,
    open_provider,
    parsed,
    request_with,
    run_step,
)
from tests.fakes.llm_server import FakeLLM, Step
from tools.types import ToolCall, ToolResult


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
        system = body["system"]  # text, or text blocks (with cache breakpoints)
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
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


def result_in_second_request(
    provider: str, body: dict[str, Any], call_id: str, state: Any
) -> None:
    """The second request carries the echoed step and the result under its id,
    in the provider's own format."""
    output = json.dumps(PAYLOAD, ensure_ascii=False, sort_keys=True)
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
                    "cache_control": {"type": "ephemeral"},
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
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_a_step_read_by_the_turn_closes_its_streams_in_place(
    fake: FakeLLM, provider_name: str
) -> None:
    """A step the turn has read leaves nothing open for the garbage collector,
    which would close each stream later in a task of its own."""
    fake.script(
        provider_name,
        [Step(tool_calls=[("call_a", "get_weather", {"city": "Madrid"})], chunk=3)],
    )
    left_open: list[str] = []
    first_iteration, finalizer = sys.get_asyncgen_hooks()

    def counted(generator: Any) -> None:
        left_open.append(generator.__qualname__)
        finalizer(generator)

    sys.set_asyncgen_hooks(first_iteration, counted)
    try:
        async with open_provider(provider_name, fake.base_url) as p:
            step = await stream_step(p, request_with(UserText("hi")), "", ignore)
        gc.collect()
    finally:
        sys.set_asyncgen_hooks(first_iteration, finalizer)

    assert [call.id for call in step.tool_calls] == ["call_a"]
    assert left_open == []


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
async def test_google_calls_without_ids_get_ids_of_their_own(fake: FakeLLM) -> None:
    """Made up from the step's count, the same tool first in two steps had the
    same id: a step and its results rebuilt for another provider (the agent's
    provider switched) then paired two calls with one id."""

    def answer(body: dict[str, Any]) -> Step:
        return Step(
            tool_calls=[
                ("", "get_weather", {"city": "Lima"}),
                ("", "get_weather", {"city": "Cusco"}),
            ]
        )

    fake.script("google", answer)
    async with open_provider("google", fake.base_url) as p:
        _, first = await run_step(p, request_with(UserText("weather?")))
        _, second = await run_step(p, request_with(UserText("weather?")))
    ids = [call.id for step in (first, second) for call in step.tool_calls]
    assert len(set(ids)) == 4
    assert all(re.fullmatch(r"get_weather-[0-9a-f]{12}", i) for i in ids), ids
    assert [call.arguments for call in first.tool_calls] == [
        {"city": "Lima"},
        {"city": "Cusco"},
    ]


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
