"""Benchmark: one turn with 1, 10 and 40 sequential tool calls through the real OpenAI
and Anthropic adapters, against an in-process fake endpoint (no socket).

Each step of the scripted model proposes one ``search_foods`` call until it has made
N, then answers. A call's cost is everything the harness does for it: the SDK
building the request from the whole history and parsing the streamed answer, the
adapter, the dispatcher (validation, the demo catalog's query, the log row) and the
turn's own bookkeeping; the fake's own time is measured and left out. Beside it, the
harness alone: the same with the catalog's search (the tool's own work) left out
too. For the turn of 40 calls it also prints where a call's time goes: the rows
written (the step and results messages, the log row), the catalog's search, the
rest of the work in the database thread, the hand-off to that thread, and what is
left on the event loop (the provider request and the loop). A turn has a cost of
its own, calls or not (storing the member's message, choosing the tools, reading
the history, one request, storing the reply), which weighs on the per-call figure
of a short turn; so it also runs a turn that makes no call, and prints what the
calls add to a turn: each turn less that one of the same repeat, over its calls.

The turns run as a server runs them: in one event loop, through one adapter and
SDK client per provider.

Then, apart, one request with a history of 0, 10, 40 and 100 calls already made:
what the adapter and the SDK cost per request as the history grows.

Run: ``make bench`` or ``DEBUG=1 .venv/bin/python tests/bench/bench_tool_calls.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _setup(database_url: str) -> Any:
    os.environ.update(
        DEBUG="0",
        SECRET_KEY="bench-" + "k" * 60,
        FIELD_ENCRYPTION_KEYS="tUYc8UzT6vPRQJ5m0tEuS7Kn2dJkPfvGm2NFMm6p0xY=",
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="gymnasia.settings",
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("seed_demo", stdout=open(os.devnull, "w"))
    from agents.models import Agent

    Agent.objects.update(max_tool_steps=50)
    return Agent.objects.get()


def _model(calls: int) -> Any:
    """The scripted model: ``calls`` searches, one per step, then an answer."""
    from tests.fakes.llm_steps import searches_then

    return searches_then(calls, "Listo.")


class FakeEndpoint:
    """The fake provider in this process, through the real adapter and SDK; the
    fake's own time (``timer.seconds``) is kept so that it can be left out."""

    def __init__(self, name: str, script: Any) -> None:
        from agents.providers.anthropic import AnthropicProvider
        from agents.providers.openai import OpenAIProvider
        from tests.fakes.llm_server import FakeLLM, TimedInProcessClient

        self.name = name
        self.fake = FakeLLM()
        self.fake.script(name, script)
        self.timer = TimedInProcessClient(self.fake, name)  # type: ignore[arg-type]
        kind: Any = OpenAIProvider if name == "openai" else AnthropicProvider
        self.provider = kind(
            api_key="sk-bench", model="m", http_client=self.timer.client
        )

    def script(self, script: Any) -> None:
        """Answer the next requests with ``script``, from a fresh count (and
        without the earlier requests' records)."""
        self.fake.reset()
        self.fake.script(self.name, script)
        self.timer.seconds = 0.0


class PartClock:
    """Seconds spent in some of the harness's functions, by part of a call."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, part: str, function: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                self.seconds[part] = self.seconds.get(part, 0.0) + elapsed

        return timed


#: The parts of a call the breakdown names, in the order it prints them.
PARTS = (
    ("storage", "message and log rows"),
    ("tool", "the catalog search (the tool's own work)"),
    ("dispatcher", "dispatcher and bookkeeping in the database thread"),
    ("hand-off", "hand-off to the database thread"),
    ("loop", "request (SDK, adapter) and turn loop"),
)


def run(database_url: str, repeats: int) -> None:
    agent = _setup(database_url)
    import agents.turn as turn
    import tools.execution as execution
    from tools.integrations.nutrition import NutritionClient

    # Where a call's time goes: database work is timed inside the database thread,
    # and within it the rows written and the catalog's search.
    clock = PartClock()
    import agents.turn_rows as turn_rows
    import agents.turn_tools as turn_tools

    storage = clock.wrap("storage", turn_rows.rows_store)
    for module in (turn, turn_rows, turn_tools):  # each calls it by its own name
        module.rows_store = storage  # type: ignore[attr-defined]
    turn.message_add = clock.wrap("storage", turn.message_add)  # type: ignore[method-assign]
    execution.tool_call_record = clock.wrap("storage", execution.tool_call_record)  # type: ignore[method-assign]
    NutritionClient.search_foods = clock.wrap("tool", NutritionClient.search_foods)  # type: ignore[method-assign]
    hand_off = turn.db_call

    async def timed_db_call(function: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await hand_off(clock.wrap("database", function), *args, **kwargs)
        finally:
            elapsed = time.perf_counter() - started
            clock.seconds["waited"] = clock.seconds.get("waited", 0.0) + elapsed

    turn.db_call = timed_db_call  # type: ignore[assignment]
    # What start-up loaded is kept out of the garbage collector's full
    # collections, as gymnasia/asgi.py does in the server.
    gc.collect()
    gc.freeze()
    # Every turn in one event loop of the kind the server runs them in (a loop of
    # its own per turn would add the loop's start and shutdown to each).
    from tests.bench.machine import run_as_served

    run_as_served(_turns(agent, clock, repeats))


#: The turns measured: one that makes no call (a turn's own cost), then 1, 10, 40.
CALLS = (0, 1, 10, 40)


async def _turns(agent: Any, clock: PartClock, repeats: int) -> None:
    """Runs the turns and prints their figures. Each repeat runs one turn of each
    length in a row, so that the machine's drift weighs on all of them alike (the
    turn with no call is subtracted from the others)."""
    import agents.turn as turn
    from tests.bench.machine import added_per_call

    for name in ("openai", "anthropic"):
        # One adapter and SDK client for every turn, as a server shares them.
        endpoint = FakeEndpoint(name, _model(0))
        turn.provider_for = lambda agent, conversation, e=endpoint: e.provider  # type: ignore[assignment]
        total: dict[int, list[float]] = {calls: [] for calls in CALLS}
        harness: dict[int, list[float]] = {calls: [] for calls in CALLS}
        database_share: dict[int, list[float]] = {calls: [] for calls in CALLS}
        parts: dict[str, list[float]] = {key: [] for key, _ in PARTS}
        for _ in range(repeats):
            for calls in CALLS:
                endpoint.script(_model(calls))
                conversation = await asyncio.to_thread(_conversation, agent)
                clock.seconds.clear()
                started = time.perf_counter()
                messages = await turn.turn_run(conversation, "busca arroz")
                elapsed = time.perf_counter() - started - endpoint.timer.seconds
                if messages[-1].text != "Listo.":
                    raise AssertionError(messages[-1].text)
                seconds = clock.seconds
                tool = seconds.get("tool", 0.0)
                total[calls].append(elapsed * 1000)
                harness[calls].append((elapsed - tool) * 1000)
                database_share[calls].append(seconds["database"] / elapsed)
                if calls == CALLS[-1]:
                    by_part = {
                        "storage": seconds["storage"],
                        "tool": tool,
                        "dispatcher": seconds["database"] - seconds["storage"] - tool,
                        "hand-off": seconds["waited"] - seconds["database"],
                        "loop": elapsed - seconds["waited"],
                    }
                    for key, value in by_part.items():
                        parts[key].append(value / calls * 1000)
        turn_ms = {calls: statistics.median(total[calls]) for calls in CALLS}
        harness_ms = {calls: statistics.median(harness[calls]) for calls in CALLS}
        print(
            f"{name:9} turn with no call (the member's message, one request, the "
            f"reply): median {turn_ms[0]:5.2f} ms; "
            f"{statistics.median(database_share[0]):.0%} of it database work"
        )
        for calls in CALLS[1:]:
            print(
                f"{name:9} turn of {calls:2} sequential calls: "
                f"median {turn_ms[calls] / calls:5.2f} ms per call "
                f"(min {min(total[calls]) / calls:5.2f}); the harness alone (the "
                f"tool's own work left out) {harness_ms[calls] / calls:5.2f} ms; "
                f"{statistics.median(database_share[calls]):.0%} of it database work"
            )
        print(
            f"{name:9} turn of {CALLS[-1]:2} calls, a call's median time by part: "
            + ", ".join(
                f"{label} {statistics.median(parts[key]):.2f} ms"
                for key, label in PARTS
            )
        )
        print(
            f"{name:9} what the calls add to a turn, per call (each turn less the "
            "turn with no call of its repeat, over its calls; the median): "
            + ", ".join(
                f"{calls} {'call' if calls == 1 else 'calls'} "
                f"{added_per_call(total, calls):.2f} ms"
                for calls in CALLS[1:]
            )
            + "; the harness alone "
            + ", ".join(
                f"{added_per_call(harness, calls):.2f} ms" for calls in CALLS[1:]
            )
        )


def _conversation(agent: Any) -> Any:
    """A new visitor's conversation, loaded as the API loads it for a turn."""
    from agents.conversations import conversation_start
    from agents.models import Conversation

    started = conversation_start(agent=agent, member=None)
    return Conversation.objects.select_related("agent", "member", "business").get(
        pk=started.pk
    )


def _history(provider: str, calls: int) -> tuple[Any, ...]:
    """A turn's history after ``calls`` searches, as the turn keeps it."""
    from agents.providers.base import AssistantStep, ToolResults, UserText
    from tools.types import ToolCall, ToolResult

    history: list[Any] = [UserText("¿Cuántos carbohidratos tiene el arroz?")]
    for n in range(calls):
        call = ToolCall(f"call_{n}", "search_foods", '{"query": "arroz"}')
        item = {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
        state = {"openai": {"output": [item]}} if provider == "openai" else {}
        payload = {
            "status": "ok",
            "foods": [
                {"name": "Arroz blanco (cocido)", "carbohydrates_per_100g": "28.0"},
                {"name": "Arroz integral (cocido)", "carbohydrates_per_100g": "23.5"},
            ],
        }
        history.append(AssistantStep("", (call,), state))
        history.append(ToolResults((ToolResult(call.id, "ok", payload, False),)))
    return tuple(history)


HISTORY_LENGTHS = (0, 10, 40, 100)


def request_cost_by_history(repeats: int) -> None:
    """Median cost of one request (adapter and SDK, the fake's time left out) by
    the length of the history it carries; each history is sent once first, as in
    a turn where every earlier item has been sent before."""
    from tests.bench.machine import run_as_served

    for name in ("openai", "anthropic"):
        costs = run_as_served(_request_costs(name, repeats * 10))
        print(
            f"{name:9} one request, history of "
            + ", ".join(
                f"{n} calls {statistics.median(costs[n]) * 1000:.2f} ms"
                for n in HISTORY_LENGTHS
            )
        )


async def _request_costs(name: str, rounds: int) -> dict[int, list[float]]:
    from agents.providers.base import ModelRequest
    from tests.fakes.llm_server import Step
    from tools.registry import published_registry

    endpoint = FakeEndpoint(name, lambda body: Step(text="Listo."))
    tools = tuple(tool.spec() for tool in published_registry())
    requests = {
        n: ModelRequest("Eres el asistente.", _history(name, n), tools)
        for n in HISTORY_LENGTHS
    }

    async def send(request: ModelRequest) -> float:
        endpoint.timer.seconds = 0.0
        started = time.perf_counter()
        async for _ in endpoint.provider.stream(request):
            pass
        return time.perf_counter() - started - endpoint.timer.seconds

    for request in requests.values():
        await send(request)
    costs: dict[int, list[float]] = {n: [] for n in HISTORY_LENGTHS}
    for _ in range(rounds):
        for n in HISTORY_LENGTHS:  # interleaved: the machine's drift hits all alike
            costs[n].append(await send(requests[n]))
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", help="a DATABASE_URL; default a new SQLite file")
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    from tests.bench.machine import speed_line

    print(speed_line())
    if options.database:
        from tests.bench.bench_dispatch import _create_postgres_database

        _create_postgres_database(options.database)
        run(options.database, options.repeats)
    else:
        with tempfile.TemporaryDirectory() as folder:
            run(f"sqlite:///{folder}/bench.sqlite3", options.repeats)
    request_cost_by_history(options.repeats)


if __name__ == "__main__":
    main()
