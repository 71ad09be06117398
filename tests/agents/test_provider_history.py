"""How a conversation's history reaches each provider through the real SDK
clients: a step another provider wrote is rebuilt in this one's format, Anthropic's
consecutive user items are merged, and every item is encoded once for the turn
and sent as encoded afresh."""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.db import connection
from django.test import Client

from agents.conversations import conversation_start, conversation_token
from agents.models import Agent, Message
from agents.providers.base import (
    AssistantStep,
    ToolResults,
    UserText,
)
from agents.turn import turn_run
from approvals.services import pending_action_approve, pending_action_execute
from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from tests.agents.provider_kit import (
    PAYLOAD,
    PROVIDERS,
    TOOLS,
    last_body,
    make_provider,
    open_provider,
    request_with,
    run_step,
)
from tests.factories import StaffRoleFactory
from tests.fakes.llm_server import FakeLLM, Step
from tools.models import ToolCallLog
from tools.types import ToolCall, ToolResult


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
    output = json.dumps(PAYLOAD, ensure_ascii=False, sort_keys=True)
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
                        "cache_control": {"type": "ephemeral"},
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
async def test_history_items_and_tools_are_encoded_once_and_sent_as_afresh(
    fake: FakeLLM, provider_name: str, streaming: bool
) -> None:
    """A turn sends its whole history and its tools on every step: each item and
    tool spec is encoded on its first request and reused after, and what is sent
    is what encoding the same history and tools from scratch sends."""
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
        tools = [spec.wire[provider_name] for spec in TOOLS]
        await run_step(p, request_with(*history))
        assert [item.wire[provider_name] for item in history[:3]] == encoded
        assert all(
            spec.wire[provider_name] is before
            for spec, before in zip(TOOLS, tools, strict=True)
        )
        assert all(
            after is before
            for after, before in zip(
                [item.wire[provider_name] for item in history], encoded, strict=False
            )
        )
        afresh = tuple(dataclasses.replace(item, wire={}) for item in history)
        new_tools = tuple(dataclasses.replace(spec, wire={}) for spec in TOOLS)
        await run_step(p, request_with(*afresh, tools=new_tools))
    *_, reused, from_scratch = fake.requests[provider_name]
    assert reused.body == from_scratch.body
    assert reused.body["stream"] is streaming


@pytest.mark.django_db
@pytest.mark.parametrize("second_name", ["openai", "anthropic"])
def test_switching_from_google_keeps_each_call_its_own_id(
    fake: FakeLLM, agent, monkeypatch, second_name: str
) -> None:
    """Gemini's calls without ids, the same tool first in two steps of a turn:
    after the agent's provider is switched, the next provider is sent each call
    and its result under an id of their own (two calls had shared one)."""
    current = {"name": "google"}
    monkeypatch.setattr(
        "agents.turn.provider_for",
        lambda agent, conversation: make_provider(current["name"], fake.base_url),
    )
    fake.script(
        "google",
        [
            Step(tool_calls=[("", "search_foods", {"query": "arroz"})]),
            Step(tool_calls=[("", "search_foods", {"query": "pan"})]),
            Step(text="Listo."),
        ],
    )
    conversation = conversation_start(agent=agent, member=None)
    async_to_sync(turn_run)(conversation, "¿arroz o pan?")

    current["name"] = second_name
    fake.script(second_name, [Step(text="De nada.")])
    added = async_to_sync(turn_run)(conversation, "gracias")

    assert added[-1].text == "De nada."
    body = last_body(fake, second_name)
    if second_name == "anthropic":
        blocks = [b for m in body["messages"] for b in m["content"] if "type" in b]
        calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    else:
        calls = [
            i["call_id"] for i in body["input"] if i.get("type") == "function_call"
        ]
        results = [
            i["call_id"]
            for i in body["input"]
            if i.get("type") == "function_call_output"
        ]
    assert len(set(calls)) == 2
    assert results == calls


@pytest.mark.django_db
def test_google_goes_on_after_staff_approved_a_request(
    fake: FakeLLM, agent, settings, monkeypatch
) -> None:
    """An approved request joins the history as a call and its result right after
    the reply that said it waits: Gemini wants a turn of calls right after a user
    turn, so the reply and the call are sent as one model turn, and both the
    write-up of the outcome and the member's next message are answered."""
    settings.GOOGLE_API_KEY = "google-test-key"
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    monkeypatch.setattr(
        "approvals.tasks.execute_approved_action.delay", lambda action_id: None
    )
    call_command("seed_demo", provider="google", stdout=StringIO())
    agent = Agent.objects.get()
    member = Member.objects.get(external_id="socio-1001")
    staff = StaffRoleFactory(business=agent.business, role="staff").user
    year = business_today(business=agent.business).year + 1
    freeze = {"start": f"{year}-08-01", "end": f"{year}-08-10"}
    fake.script(
        "google",
        [
            Step(tool_calls=[("", "freeze_membership", freeze)]),
            Step(text="Se lo he pasado al equipo."),
            Step(text="Tu cuota queda congelada."),
            Step(text="De nada."),
        ],
    )
    conversation = conversation_start(agent=agent, member=member)
    async_to_sync(turn_run)(conversation, "Congela mi cuota en agosto")
    action = ToolCallLog.objects.get(expires_at__isnull=False)

    pending_action_approve(action_id=action.pk, user=staff)
    pending_action_execute(action_id=action.pk)
    added = async_to_sync(turn_run)(conversation, "Gracias")

    outcome = Message.objects.filter(
        conversation=conversation, content__approved_action=str(action.pk)
    ).get(role=Message.Role.ASSISTANT)
    assert outcome.text == "Tu cuota queda congelada."
    assert [m.text for m in added] == ["Gracias", "De nada."]
    contents = last_body(fake, "google")["contents"]
    assert [c["role"] for c in contents] == [
        "user",
        "model",  # the freeze call
        "user",  # its result
        "model",  # the reply, then the approved call, as one turn
        "user",  # the approved call's result
        "model",  # the outcome's write-up
        "user",
    ]
    assert [list(p) for p in contents[3]["parts"]] == [
        ["text"],
        ["functionCall", "thoughtSignature"],
    ]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "state",
    [
        {},  # another provider's step: rebuilt from its text and calls
        {
            "anthropic": {
                "content": [
                    {"type": "text", "text": ""},
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "get_weather",
                        "input": {"city": "Oslo"},
                    },
                ]
            }
        },
    ],
    ids=["rebuilt", "echoed"],
)
async def test_anthropic_is_sent_no_text_block_without_text(
    fake: FakeLLM, state: dict
) -> None:
    """The Messages API refuses a text block that is empty or only whitespace,
    which models write before a call (Claude's empty block, another model's line
    break): such a block is left out, and the conversation goes on."""
    fake.script("anthropic", [Step(text="Hace frío.")])
    history = (
        UserText("¿Tiempo en Oslo?"),
        AssistantStep(
            "\n", (ToolCall("call_1", "get_weather", {"city": "Oslo"}),), state
        ),
        ToolResults((ToolResult("call_1", "ok", {"temp_c": -3}, is_error=False),)),
    )
    async with open_provider("anthropic", fake.base_url) as p:
        _, done = await run_step(p, request_with(*history))

    assert done.text == "Hace frío."
    assistant = last_body(fake, "anthropic")["messages"][1]
    assert [b["type"] for b in assistant["content"]] == ["tool_use"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_google_goes_on_after_two_messages_sent_at_once(
    fake: FakeLLM, settings, monkeypatch
) -> None:
    """A member who sends twice at once: the turns run one after the other, each
    whole (one turn's reply had been stored before the other turn's step: two
    model turns in a row, which Gemini refuses unless sent as one). The next
    message is answered."""
    settings.GOOGLE_API_KEY = "google-test-key"
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    call_command("seed_demo", provider="google", stdout=StringIO())
    agent = Agent.objects.get()
    conversation = conversation_start(
        agent=agent, member=Member.objects.get(external_id="socio-1001")
    )
    token, _ = conversation_token(conversation)
    asked = itertools.count()

    def model(body: dict) -> Step:
        parts = body["contents"][-1]["parts"]
        if any("functionResponse" in part for part in parts):
            return Step(text="Hecho.")
        if "arroz" not in str(parts):
            return Step(text="¿Algo más?")
        # The first turn to ask is answered at once, the other later.
        number = next(asked)
        call = (f"call_{number}", "search_foods", {"query": "arroz"})
        return Step(tool_calls=[call], delay=0.6 if number else 0.0)

    fake.script("google", model)
    url = f"/api/v1/conversations/{conversation.pk}/messages"
    auth = {"Authorization": f"Bearer {token}"}
    barrier = threading.Barrier(2)

    def send() -> None:
        try:
            barrier.wait()
            Client().post(
                url,
                {"text": "¿Y el arroz?"},
                content_type="application/json",
                headers=auth,
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    roles = Message.objects.filter(conversation=conversation).order_by("pk")
    one_turn = ["member", "step", "tool_results", "assistant"]
    assert [m.role for m in roles] == one_turn * 2

    after = Client().post(
        url, {"text": "Gracias"}, content_type="application/json", headers=auth
    )

    assert after.json()["messages"][-1]["text"] == "¿Algo más?"
