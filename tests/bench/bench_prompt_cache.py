"""Benchmark: what the providers' prompt caches save over a conversation.

A demo member talks to the demo agent for 10 turns, offered the tools the demo
agent offers a member (12: every published tool but Stripe's two, whose
integration the demo leaves unconnected; the line "tools offered" says how
many). The scripted model
calls one or two read tools in most turns, then answers. Each turn runs through
the real turn code (``turn_run``), the real adapter and SDK of OpenAI, Anthropic
and Google, against the fake APIs on loopback (``tests/fakes/llm_server.py``),
whose prompt caches work as the real ones do (``tests/fakes/llm_cache.py``;
tokens counted as characters / 4). The figures are read back from the steps'
stored rows, as the cost page reads them.

Each provider runs twice, in a conversation of its own:

- caching on: the adapters as they are (Anthropic's breakpoints, OpenAI's
  ``prompt_cache_key``; Gemini's caching is implicit);
- caching off: the adapter with ``prompt_caching=False`` (no breakpoints, no key),
  and, for OpenAI and Gemini, whose caching no request can turn off, an API that
  caches nothing: what the same conversation costs without a cache.

It prints, per turn, the input tokens billed (all of them, cached or not), the
part read from the cache and the part written to it; then, from turn 3 on, the
share of input tokens read from the cache, and what the whole conversation's
steps cost at the model's list price (``agents.usage.LIST_PRICES``; Anthropic
bills cache writes at 1.25 times its input price). The target: at least 70 %
cached on Anthropic and OpenAI with caching on.

Run: ``DEBUG=1 .venv/bin/python tests/bench/bench_prompt_cache.py [--turns 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PROVIDERS = ("openai", "anthropic", "google")
MODELS = {
    "openai": "gpt-5-mini",
    "anthropic": "claude-sonnet-4-5",
    "google": "gemini-2.5-flash",
}
#: The turns from which the cached share is given (the first two fill the cache).
FROM_TURN = 3

#: What the member says, and the read tools the model calls for it, one per step
#: (arguments "week" and "today": dates from the gym's today).
CONVERSATION: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    (
        "¿Cuántos hidratos tiene el arroz blanco?",
        (("search_foods", {"query": "arroz"}),),
    ),
    ("¿Y el integral?", (("search_foods", {"query": "arroz integral"}),)),
    ("¿Qué clases hay esta semana?", (("list_classes", "week"),)),
    ("¿En cuáles estoy apuntado?", (("list_my_bookings", {}),)),
    ("¿Cómo está mi cuota?", (("get_membership", {}),)),
    ("Gracias. ¿Abrís en festivos?", ()),
    ("¿Qué comí hoy?", (("get_meal_diary", "today"),)),
    (
        "¿Y cuántos hidratos tiene el pollo, y la avena?",
        (("search_foods", {"query": "pollo"}), ("search_foods", {"query": "avena"})),
    ),
    ("¿Tengo alguna solicitud pendiente?", (("list_my_requests", {}),)),
    ("Vale, nada más. ¡Gracias!", ()),
)

ANSWER = (
    "Aquí tienes lo que he encontrado, con las cifras que me ha dado el sistema "
    "del gimnasio. Si quieres, puedo buscar algo más o ayudarte a organizar tu "
    "semana de entrenamiento y tus comidas."
)


@dataclass
class TurnFigures:
    input: int = 0
    cached: int = 0
    written: int = 0


def _arguments(arguments: Any, today: Any) -> dict[str, Any]:
    """A call's arguments; "week" and "today" are dates from the gym's today."""
    from datetime import timedelta

    if arguments == "week":
        end = today + timedelta(days=6)
        return {"date_from": today.isoformat(), "date_to": end.isoformat()}
    if arguments == "today":
        return {"date": today.isoformat()}
    return dict(arguments)


def _model(today: Any) -> Any:
    """The scripted model, a function of the request: in the member's n-th turn,
    the turn's calls one per step, then the answer."""
    from tests.fakes.llm_server import Step

    def step(body: dict[str, Any]) -> Step:
        said, results = _read(body)
        _, calls = CONVERSATION[(said - 1) % len(CONVERSATION)]
        if results < len(calls):
            name, arguments = calls[results]
            call_id = f"call_{said}_{results}"
            return Step(tool_calls=[(call_id, name, _arguments(arguments, today))])
        return Step(text=ANSWER)

    return step


def _read(body: dict[str, Any]) -> tuple[int, int]:
    """How many messages the member has written in the request, and how many
    tool results follow the last of them, whatever the provider's format."""
    said = results = 0
    for role, kinds in _items(body):
        if role == "user" and "text" in kinds:
            said, results = said + 1, 0
        results += kinds.count("result")
    return said, results


def _items(body: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """Each input item's role and the kinds of its parts (text, result, call)."""
    if "input" in body:  # OpenAI
        return [
            (
                str(item.get("role", "")),
                ["result" if item.get("type") == "function_call_output" else "text"],
            )
            for item in body["input"]
        ]
    if "messages" in body:  # Anthropic
        return [
            (
                message["role"],
                [
                    "result" if block.get("type") == "tool_result" else "text"
                    for block in message["content"]
                ],
            )
            for message in body["messages"]
        ]
    return [  # Gemini
        (
            content["role"],
            [
                "result" if "functionResponse" in part else "text"
                for part in content["parts"]
            ],
        )
        for content in body["contents"]
    ]


def _adapter(name: str, base_url: str, caching: bool) -> Any:
    from agents.providers.anthropic import AnthropicProvider
    from agents.providers.google import GoogleProvider
    from agents.providers.openai import OpenAIProvider

    kinds: dict[str, Any] = {
        "openai": (OpenAIProvider, base_url + "/v1"),
        "anthropic": (AnthropicProvider, base_url),
        "google": (GoogleProvider, base_url),
    }
    kind, url = kinds[name]
    return kind(
        api_key="sk-bench",
        model=MODELS[name],
        base_url=url,
        timeout=30.0,
        prompt_caching=caching,
    )


async def _conversation_run(
    agent: Any, member: Any, name: str, caching: bool, turns: int
) -> tuple[list[TurnFigures], Any]:
    """One conversation of ``turns`` turns on ``name``'s adapter: each turn's
    figures, from its steps' stored rows, and what the whole conversation's
    steps cost at list prices (``agents.usage``)."""
    import agents.turn as turn
    from agents.conversations import conversation_start
    from agents.models import Conversation, Message
    from gymnasia.gyms.selectors import business_today
    from tests.fakes.llm_server import running_fake_llm

    today = await asyncio.to_thread(business_today, business=agent.business)
    with running_fake_llm() as fake:
        fake.prompt_cache(name, caching or name == "anthropic")  # type: ignore[arg-type]
        fake.script(name, _model(today))
        provider = _adapter(name, fake.base_url, caching)
        turn.provider_for = lambda agent, conversation: provider  # type: ignore[assignment]

        def started() -> Any:
            conversation = conversation_start(agent=agent, member=member)
            return Conversation.objects.select_related(
                "agent", "member", "business"
            ).get(pk=conversation.pk)

        conversation = await asyncio.to_thread(started)
        figures = []
        try:
            for number in range(turns):
                text, _ = CONVERSATION[number % len(CONVERSATION)]
                messages = await turn.turn_run(conversation, text)
                if messages[-1].text != ANSWER:
                    raise AssertionError(f"{name}: {messages[-1].text}")
                rows = await asyncio.to_thread(
                    lambda first=messages[0].pk: list(
                        Message.objects.filter(
                            conversation=conversation, pk__gt=first
                        ).exclude(model="")
                    )
                )
                figures.append(
                    TurnFigures(
                        input=sum(r.input_tokens or 0 for r in rows),
                        cached=sum(r.cached_input_tokens or 0 for r in rows),
                        written=sum(r.cache_write_tokens or 0 for r in rows),
                    )
                )
        finally:
            await provider.aclose()
    return figures, await asyncio.to_thread(_cost, conversation)


def _cost(conversation: Any) -> Any:
    from agents.models import Message
    from agents.usage import usage_by_model

    [usage] = usage_by_model(
        Message.objects.filter(conversation=conversation),
        business_id=conversation.business_id,
    )
    return usage.cost


def _share(figures: list[TurnFigures]) -> tuple[int, int, float]:
    later = figures[FROM_TURN - 1 :]
    total = sum(f.input for f in later)
    cached = sum(f.cached for f in later)
    return total, cached, cached / total if total else 0.0


def run(database_url: str, turns: int) -> None:
    # The demo gym, seeded as the tool-call benchmark seeds it.
    from tests.bench.bench_tool_calls import _setup

    agent = _setup(database_url)
    from gymnasia.gyms.models import Member
    from tools.selection import offered_tools

    member = Member.objects.filter(business=agent.business).order_by("pk").first()
    print(f"tools offered to the member: {len(offered_tools(agent, member).offered)}")
    asyncio.run(_all(agent, member, turns))


async def _all(agent: Any, member: Any, turns: int) -> None:
    """Every provider, caching on then off; each turn's line, then the summary."""
    summary = []
    for name in PROVIDERS:
        for caching in (True, False):
            label = f"{name:9} caching {'on ' if caching else 'off'}"
            figures, cost = await _conversation_run(agent, member, name, caching, turns)
            for number, f in enumerate(figures, start=1):
                share = f.cached / f.input if f.input else 0.0
                print(
                    f"{label} turn {number:2}: input {f.input:6} tokens billed, "
                    f"{f.cached:6} read from the cache ({share:4.0%}), "
                    f"{f.written:5} written to it"
                )
            total, cached, share = _share(figures)
            summary.append(
                f"{label}: turns {FROM_TURN}-{turns}: input {total} tokens, "
                f"{cached} read from the cache: {share:.0%} cached; all {turns} "
                f"turns at {MODELS[name]}'s list prices: {cost:.4f} USD"
            )
    for line in summary:
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=10)
    options = parser.parse_args()
    if options.turns < FROM_TURN:
        parser.error(f"--turns must be at least {FROM_TURN}")
    from tests.bench.machine import speed_line

    print(speed_line())
    with tempfile.TemporaryDirectory() as folder:
        run(f"sqlite:///{folder}/bench.sqlite3", options.turns)


if __name__ == "__main__":
    main()
