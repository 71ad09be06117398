"""Prompt caching through the real turn, the real SDKs and the fake APIs, whose
caches work as the real ones (``tests/fakes/llm_cache.py``): each request repeats
the one before it as its prefix, byte for byte, across steps and turns (the
history read back from the database included); Anthropic's breakpoints end the
tools, the system text and the latest block; OpenAI's cache key tells an agent's
members from its visitors and one agent from another; a second turn reads the
cache, and the steps' rows keep what it read and wrote."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.utils.module_loading import import_string

from agents.assistant import ADAPTERS, DEFAULT_MODELS, cache_key_for
from agents.conversations import conversation_start
from agents.models import Agent, Conversation, Message
from agents.providers.base import AssistantStep, ToolResults, UserText
from agents.services import agent_create
from agents.turn import turn_run
from gymnasia.gyms.models import Member
from tests.agents.provider_kit import (
    PAYLOAD,
    TOOLS,
    last_body,
    make_provider,
    request_with,
    run_step,
)
from tests.agents.test_step_usage import seeded
from tests.fakes.llm_server import FakeLLM, Step, running_fake_llm
from tools.types import ToolCall, ToolResult

PROVIDERS = ("openai", "anthropic", "google")
#: Each provider's key setting, base URL variable and the URL's path.
CONFIG = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ""),
    "google": ("GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", ""),
}
BREAKPOINT = b',"cache_control":{"type":"ephemeral"}}'
ANSWER = "El arroz blanco cocido tiene 28 g de hidratos por cada 100 g."


def _last_is_result(body: dict[str, Any]) -> bool:
    if "input" in body:
        return bool(body["input"][-1].get("type") == "function_call_output")
    if "messages" in body:
        return bool(body["messages"][-1]["content"][-1].get("type") == "tool_result")
    return "functionResponse" in body["contents"][-1]["parts"][-1]


def searched_then_answered(body: dict[str, Any]) -> Step:
    """A search in a turn's first step, the answer once its result is back."""
    if _last_is_result(body):
        return Step(text=ANSWER)
    call_id = f"call_{len(json.dumps(body))}"  # a new id in each turn
    return Step(tool_calls=[(call_id, "search_foods", {"query": "arroz"})])


@pytest.fixture(params=PROVIDERS)
def gym(request, settings, monkeypatch):
    """The demo gym's agent on a provider whose fake API answers searches."""
    provider = request.param
    key, variable, path = CONFIG[provider]
    with running_fake_llm() as fake:
        setattr(settings, key, "sk-test")
        monkeypatch.setenv(variable, fake.base_url + path)
        agent, _ = seeded(provider, DEFAULT_MODELS[provider])
        fake.script(provider, searched_then_answered)
        yield provider, agent, fake


def talk(agent: Agent, member: Member | None, *texts: str) -> Conversation:
    """A conversation of ``member`` (``None``: a visitor) with ``agent``, through
    a turn per text."""
    started = conversation_start(agent=agent, member=member)
    conversation = Conversation.objects.select_related(
        "agent", "member", "business"
    ).get(pk=started.pk)
    for text in texts:
        messages = async_to_sync(turn_run)(conversation, text)
        assert messages[-1].text == ANSWER
    return conversation


def demo_member(agent: Agent) -> Member:
    return Member.objects.filter(business=agent.business).order_by("pk").first()


def repeated_part(provider: str, raw: bytes) -> bytes:
    """What the next request must start with: the request but its end (OpenAI's
    and Anthropic's bodies end with the history; Anthropic's latest block's
    breakpoint moves on to the next request's latest block)."""
    if provider == "anthropic":
        return raw[: raw.rindex(BREAKPOINT)]
    assert raw.endswith(b"]}")
    return raw[:-2]


def gemini_prompt(body: dict[str, Any]) -> list[str]:
    """Gemini's prompt, as the pieces it reads in order."""
    return [
        json.dumps(body["systemInstruction"]),
        json.dumps(body["tools"]),
        *(json.dumps(content) for content in body["contents"]),
    ]


@pytest.mark.django_db
def test_each_request_repeats_the_one_before_byte_for_byte(gym):
    provider, agent, fake = gym
    talk(agent, demo_member(agent), "¿Cuántos hidratos tiene el arroz?", "¿Y ahora?")

    records = fake.requests[provider]
    assert len(records) == 4  # two turns of two steps
    for before, after in itertools.pairwise(records):
        if provider == "google":  # the SDK writes the body; the prompt's pieces
            earlier = gemini_prompt(before.body)
            assert gemini_prompt(after.body)[: len(earlier)] == earlier
        else:
            assert after.raw.startswith(repeated_part(provider, before.raw))


@pytest.mark.django_db
def test_a_second_turn_reads_the_cache_and_its_rows_keep_it(gym):
    provider, agent, fake = gym
    conversation = talk(agent, demo_member(agent), "¿Arroz?", "¿Y el integral?")

    billed = fake.billed[provider]
    rows = list(
        Message.objects.filter(conversation=conversation)
        .exclude(model="")
        .order_by("pk")
    )
    assert [r.role for r in rows] == ["step", "assistant", "step", "assistant"]
    assert [
        (r.cached_input_tokens, r.cache_write_tokens, r.input_tokens) for r in rows
    ] == [(b.cached, b.written, b.input) for b in billed]
    second_turn = billed[2]
    assert second_turn.cached > 0.7 * second_turn.input
    if provider == "anthropic":
        assert billed[0].written > 0  # the first request writes what others read
        assert second_turn.cached == billed[1].cached + billed[1].written


@pytest.mark.django_db
def test_caching_off_reads_and_writes_nothing(gym, monkeypatch):
    provider, agent, fake = gym
    # OpenAI and Gemini cache by themselves: the API then caches nothing.
    # Anthropic caches only what breakpoints mark, and there are none.
    if provider != "anthropic":
        fake.prompt_cache(provider, False)
    off = import_string(ADAPTERS[provider])(
        api_key="sk-test",
        model=DEFAULT_MODELS[provider],
        base_url=fake.base_url + CONFIG[provider][2],
        prompt_caching=False,
    )
    monkeypatch.setattr("agents.turn.provider_for", lambda agent, conversation: off)

    talk(agent, demo_member(agent), "¿Arroz?", "¿Y el integral?")

    assert [(b.cached, b.written) for b in fake.billed[provider]] == [(0, 0)] * 4
    raw = b"".join(r.raw for r in fake.requests[provider])
    assert b"cache_control" not in raw and b"prompt_cache_key" not in raw


@pytest.mark.anyio
async def test_anthropic_breakpoints_end_tools_system_and_latest_block(
    fake: FakeLLM,
) -> None:
    call = ToolCall("call_1", "get_weather", {"city": "Quito"})
    history = (
        UserText("weather?"),
        AssistantStep("", (call,)),
        ToolResults((ToolResult("call_1", "ok", PAYLOAD, is_error=False),)),
    )
    fake.script("anthropic", [Step(text="Sunny.")])
    provider = make_provider("anthropic", fake.base_url)
    try:
        await run_step(provider, request_with(*history, tools=TOOLS))
    finally:
        await provider.aclose()

    body = last_body(fake, "anthropic")
    marked = {"type": "ephemeral"}
    assert [t.get("cache_control") for t in body["tools"]] == [None] * (
        len(TOOLS) - 1
    ) + [marked]
    [system] = body["system"]
    assert system["cache_control"] == marked
    blocks = [b for m in body["messages"] for b in m["content"]]
    assert [b.get("cache_control") for b in blocks] == [None] * (len(blocks) - 1) + [
        marked
    ]
    assert json.dumps(body).count("cache_control") == 3  # the API allows 4


@pytest.mark.django_db
def test_openai_cache_key_tells_members_visitors_and_agents_apart(
    settings, monkeypatch
):
    with running_fake_llm() as fake:
        settings.OPENAI_API_KEY = "sk-test"
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url + "/v1")
        agent, _ = seeded("openai", "gpt-5-mini")
        other = agent_create(
            business=agent.business, name="Otro", provider="openai", model="gpt-5-mini"
        )
        fake.script("openai", searched_then_answered)
        member = demo_member(agent)
        talk(agent, member, "¿Arroz?")
        talk(agent, member, "¿Arroz?")  # another conversation, the same kind
        talk(agent, None, "¿Arroz?")
        talk(Agent.objects.get(pk=other.pk), None, "¿Arroz?")

    keys = [r.body.get("prompt_cache_key") for r in fake.requests["openai"]]
    assert len(keys) == 8 and all(keys)
    member_keys, again, visitor, other_agent = (keys[i : i + 2] for i in (0, 2, 4, 6))
    assert len(set(member_keys)) == 1 and member_keys == again
    assert len({member_keys[0], visitor[0], other_agent[0]}) == 3
    assert visitor[0] == cache_key_for(Conversation(agent=agent, member=None))
