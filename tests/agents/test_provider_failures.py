"""The provider adapters when a step cannot be trusted (cut off, errors, timeouts,
an unreachable server), and stream reassembly under any chunking."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.conversations import conversation_start
from agents.models import Conversation, Message
from agents.providers.base import (
    AssistantStep,
    ProviderEvent,
    TextDelta,
    ToolResults,
    UserText,
)
from agents.turn import turn_run
from tests.agents.provider_kit import (
    PROVIDERS,
    expect_failure,
    make_provider,
    open_provider,
    request_with,
    run_step,
)
from tests.fakes.llm_server import FakeLLM, Step
from tools.models import ToolCallLog
from tools.types import ToolCall, ToolResult

# --- failures ----------------------------------------------------------------

FAULT_KINDS = {
    ("openai", "cut"): "cut_off",
    ("openai", "error"): "unavailable",
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
async def test_a_history_with_an_unanswered_call_is_refused(
    fake: FakeLLM, provider_name: str
) -> None:
    """As the real APIs refuse it (the fake checks the pairing as they do): the
    harness must never send a call without its result right after it."""
    fake.script(
        provider_name,
        [
            Step(tool_calls=[("call_1", "get_weather", {"city": "Bilbao"})]),
            Step(text="Hace sol."),
        ],
    )
    async with open_provider(provider_name, fake.base_url) as p:
        _, first = await run_step(p, request_with(UserText("¿Tiempo?")))
        step = AssistantStep(first.text, first.tool_calls, first.provider_state)
        unanswered = request_with(UserText("¿Tiempo?"), step, UserText("¿Y bien?"))
        error = await expect_failure(p, unanswered)
        result = ToolResult("call_1", "ok", {"status": "ok", "sky": "sol"}, False)
        answered = request_with(
            UserText("¿Tiempo?"), step, ToolResults((result,)), UserText("¿Y bien?")
        )
        _, done = await run_step(p, answered)
    assert error.kind == "refused"
    assert done.text == "Hace sol."


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


def _turns_talk_to(monkeypatch, fake: FakeLLM, provider_name: str) -> None:
    """Turns ask the fake, through the real adapter of ``provider_name``."""
    monkeypatch.setattr(
        "agents.turn.provider_for",
        lambda agent, conversation: make_provider(provider_name, fake.base_url),
    )


# --- a step with nothing in it -------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("provider_name", PROVIDERS)
def test_a_final_step_with_nothing_in_it_is_no_reply(
    fake: FakeLLM, agent, monkeypatch, provider_name: str
) -> None:
    """A step that finishes with neither text nor calls (Gemini's empty answer
    after function results, an OpenAI refusal) answers nothing: the member is
    told the assistant could not answer, never shown an empty reply."""
    _turns_talk_to(monkeypatch, fake, provider_name)
    fake.script(
        provider_name,
        [
            Step(tool_calls=[("call_1", "search_foods", {"query": "arroz"})]),
            Step(text=""),
        ],
    )
    conversation = conversation_start(agent=agent, member=None)

    added = async_to_sync(turn_run)(conversation, "¿Carbohidratos del arroz?")

    assert [m.role for m in added] == ["member", "notice"]
    assert added[-1].text.startswith("El asistente no está disponible ahora mismo.")
    assert not Message.objects.filter(role=Message.Role.ASSISTANT).exists()


# --- a stream that ends in a failure the turn may ask again -----------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("rate_limit_exceeded", "rate_limited"),
        ("server_error", "unavailable"),
        ("invalid_prompt", "cut_off"),
    ],
)
async def test_an_openai_stream_that_fails_is_that_failure(
    fake: FakeLLM, code: str, kind: str
) -> None:
    """A Responses stream that ends in ``response.failed`` is a rate limit or a
    fault of the server when its code says so (the turn asks again, as after the
    same HTTP status), anything else cut off; none finishes the step."""
    fake.script(
        "openai",
        [
            Step(
                tool_calls=[("call_1", "get_weather", {"city": "Paris"})],
                fault="error",
                error_code=code,
            )
        ],
    )
    async with open_provider("openai", fake.base_url) as p:
        error = await expect_failure(p, request_with(UserText("book it")))
    assert error.kind == kind


@pytest.mark.django_db
@pytest.mark.parametrize("code", ["rate_limit_exceeded", "server_error", None])
def test_a_turn_asks_again_after_an_openai_stream_failed_and_answers(
    fake: FakeLLM, agent, monkeypatch, code: str | None
) -> None:
    """A rate limit or a server fault that ends OpenAI's stream (as an ``error``
    event or ``response.failed``) ran nothing: the turn asks again, as it does
    after a 429 or a 500, and the member reads the answer, not a notice."""
    _turns_talk_to(monkeypatch, fake, "openai")
    fake.script(
        "openai",
        [
            Step(
                tool_calls=[("call_1", "search_foods", {"query": "arroz"})],
                fault="error",
                error_code=code,
            ),
            Step(tool_calls=[("call_2", "search_foods", {"query": "arroz"})]),
            Step(text="Arroz blanco (cocido): 28 g por 100 g."),
        ],
    )
    conversation = conversation_start(agent=agent, member=None)

    added = async_to_sync(turn_run)(conversation, "¿Carbohidratos del arroz?")

    assert [m.role for m in added] == ["member", "assistant"]
    assert added[-1].text == "Arroz blanco (cocido): 28 g por 100 g."
    assert len(fake.requests["openai"]) == 3
    assert ToolCallLog.objects.filter(provider_call_id="call_1").count() == 0
    assert ToolCallLog.objects.filter(provider_call_id="call_2").count() == 1


# --- how long a step may be ---------------------------------------------------

#: Where each provider's request says how much the model may write.
OUTPUT_LIMIT = {
    "openai": lambda body: body["max_output_tokens"],
    "anthropic": lambda body: body["max_tokens"],
    "google": lambda body: body["generationConfig"]["maxOutputTokens"],
}


@pytest.mark.django_db
@pytest.mark.parametrize("provider_name", PROVIDERS)
def test_every_step_may_be_as_long_as_the_agent_allows(
    fake: FakeLLM, agent, monkeypatch, provider_name: str
) -> None:
    """Each request of a turn lets the model write the agent's longest step, its
    reasoning included: a reasoning model given too little thinks its whole
    budget away and the step ends unanswered."""
    agent.max_output_tokens = 12000
    agent.save()
    _turns_talk_to(monkeypatch, fake, provider_name)
    fake.script(
        provider_name,
        [
            Step(tool_calls=[("call_1", "search_foods", {"query": "arroz"})]),
            Step(text="Arroz blanco (cocido): 28 g por 100 g."),
        ],
    )
    conversation = Conversation.objects.select_related(
        "agent", "business", "member"
    ).get(pk=conversation_start(agent=agent, member=None).pk)

    async_to_sync(turn_run)(conversation, "¿Carbohidratos del arroz?")

    limits = [OUTPUT_LIMIT[provider_name](r.body) for r in fake.requests[provider_name]]
    assert limits == [12000, 12000]
