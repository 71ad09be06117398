"""Benchmark: what two widely used open-source agent harnesses (openai-agents and
pydantic-ai) spend per sequential tool call, measured as ``bench_tool_calls.py``
measures ours, so that the two can be read side by side, same machine, same time.

Issue #5 sets its target (1 ms a call) beside what the best open-source harnesses
spend this way on this machine kind (4.1 to 4.5 ms a call). This machine's speed
drifts by a factor of two and more from day to day, so a figure in milliseconds
taken on one day cannot be held against one taken on another; two figures taken
together can.

The same OpenAI SDK (``openai``, Responses API), the same in-process fake endpoint
and scripted model as ours (``search_foods`` once per step, N times, then an
answer), the fake's own time left out. Their tool returns a fixed result at once:
what they spend is the harness alone. Each runs streamed (as our turns run) and
not streamed (their cheaper path).

They are not the project's dependencies, and openai-agents' package is named
``agents`` like our app, so this runs in a virtual environment of its own:
``make bench-reference`` makes one in ``var/reference-venv`` with pinned versions
and runs this and ``bench_tool_calls.py`` in turns.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# Appended, not put first: the harness's own ``agents`` package must win over the
# app of that name in the project's root.
sys.path.append(str(ROOT))

#: The calls of the turns measured: none (the turn's own cost), then 1, 10, 40.
CALLS = (0, 1, 10, 40)

#: What the tool answers: what our catalog answers for "arroz".
FOODS = {
    "status": "ok",
    "foods": [
        {
            "food_id": "1",
            "name": "Arroz blanco (cocido)",
            "per_100g": {"kcal": 130, "carbohydrates_g": 28.0, "protein_g": 2.7},
        },
        {
            "food_id": "2",
            "name": "Arroz integral (cocido)",
            "per_100g": {"kcal": 123, "carbohydrates_g": 25.6, "protein_g": 2.7},
        },
    ],
}
INSTRUCTIONS = "Eres el asistente del gimnasio. " * 20
ANSWER = "Listo."


class FakeEndpoint:
    """The fake provider in this process, behind an OpenAI SDK client; the fake's
    own time (``timer.seconds``) is kept so that it can be left out."""

    def __init__(self) -> None:
        import openai

        from tests.fakes.llm_server import FakeLLM, TimedInProcessClient

        self.fake = FakeLLM()
        self.timer = TimedInProcessClient(self.fake, "openai")
        self.client = openai.AsyncOpenAI(
            api_key="sk-bench", max_retries=0, http_client=self.timer.client
        )

    def script(self, calls: int) -> None:
        from tests.fakes.llm_steps import searches_then

        self.fake.reset()
        self.fake.script("openai", searches_then(calls, ANSWER))
        self.timer.seconds = 0.0


def _openai_agents(endpoint: FakeEndpoint) -> dict[str, Any]:
    """A turn of openai-agents, streamed and not: each returns the final text."""
    from agents import (
        Agent,
        OpenAIResponsesModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )

    set_tracing_disabled(True)

    @function_tool
    def search_foods(query: str) -> dict[str, Any]:
        """Search the gym's food catalog."""
        return FOODS

    agent = Agent(
        name="gym",
        instructions=INSTRUCTIONS,
        tools=[search_foods],
        model=OpenAIResponsesModel(model="m", openai_client=endpoint.client),
    )

    async def streamed(text: str) -> Any:
        run = Runner.run_streamed(agent, text, max_turns=60)
        async for _ in run.stream_events():
            pass
        return run.final_output

    async def whole(text: str) -> Any:
        return (await Runner.run(agent, text, max_turns=60)).final_output

    return {"streamed": streamed, "not streamed": whole}


def _pydantic_ai(endpoint: FakeEndpoint) -> dict[str, Any]:
    """A turn of pydantic-ai, streamed and not: each returns the final text."""
    from pydantic_ai import Agent, AgentRunResultEvent
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIResponsesModel(
        "gpt-5", provider=OpenAIProvider(openai_client=endpoint.client)
    )
    agent = Agent(model, instructions=INSTRUCTIONS)

    @agent.tool_plain
    def search_foods(query: str) -> dict[str, Any]:
        """Search the gym's food catalog."""
        return FOODS

    async def streamed(text: str) -> Any:
        output = None
        async with agent.run_stream_events(text) as events:
            async for event in events:
                if isinstance(event, AgentRunResultEvent):
                    output = event.result.output
        return output

    async def whole(text: str) -> Any:
        return (await agent.run(text)).output

    return {"streamed": streamed, "not streamed": whole}


HARNESSES = {"openai-agents": _openai_agents, "pydantic-ai": _pydantic_ai}


async def _measure(name: str, repeats: int) -> None:
    from tests.bench.machine import added_per_call

    endpoint = FakeEndpoint()
    for mode, turn in HARNESSES[name](endpoint).items():
        times: dict[int, list[float]] = {calls: [] for calls in CALLS}
        # Two rounds first, unmeasured: imports and first-use caches.
        for repeat in range(repeats + 2):
            for calls in CALLS:
                endpoint.script(calls)
                started = time.perf_counter()
                answer = await turn("busca arroz")
                elapsed = time.perf_counter() - started - endpoint.timer.seconds
                if answer != ANSWER:
                    raise AssertionError(f"{name} answered {answer!r}")
                if repeat >= 2:
                    times[calls].append(elapsed * 1000)
        median = {calls: statistics.median(times[calls]) for calls in CALLS}
        print(
            f"{name:13} {mode:12} turn with no call {median[0]:5.2f} ms; per call: "
            + ", ".join(
                f"{calls} {'call' if calls == 1 else 'calls'} "
                f"{median[calls] / calls:.2f} ms"
                for calls in CALLS[1:]
            )
            + "; what the calls add per call: "
            + ", ".join(f"{added_per_call(times, calls):.2f} ms" for calls in CALLS[1:])
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    from tests.bench.machine import run_as_served, speed_line

    print(speed_line())
    gc.collect()
    gc.freeze()
    for name in HARNESSES:
        # The event loop our server and benchmark run on (uvloop), for both sides.
        run_as_served(_measure(name, options.repeats))


if __name__ == "__main__":
    main()
