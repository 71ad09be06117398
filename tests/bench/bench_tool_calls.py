"""Benchmark: one turn with 1, 10 and 40 sequential tool calls through the real OpenAI
and Anthropic adapters, against an in-process fake endpoint (no socket).

Each step of the scripted model proposes one ``search_foods`` call until it has made
N, then answers. A call's cost is everything the harness does for it: the SDK
building the request from the whole history and parsing the streamed answer, the
adapter, the dispatcher (validation, the demo catalog's query, the log row) and the
turn's own bookkeeping; the fake's own time is measured and left out.

Run: ``make bench`` or ``DEBUG=1 .venv/bin/python tests/bench/bench_tool_calls.py``.
"""

from __future__ import annotations

import argparse
import asyncio
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
    from tests.fakes.llm_server import Step

    def step(body: dict[str, Any]) -> Any:
        text = str(body)
        done = text.count("function_call_output") + text.count("'tool_result'")
        if done < calls:
            return Step(
                tool_calls=[(f"call_{done}", "search_foods", {"query": "arroz"})]
            )
        return Step(text="Listo.")

    return step


def run(database_url: str, repeats: int) -> None:
    agent = _setup(database_url)
    import httpx2

    import agents.turn as turn

    # How much of a call is database work, timed inside the database thread.
    database_seconds = 0.0
    hand_off = turn.db_call

    async def timed_db_call(function: Any, *args: Any, **kwargs: Any) -> Any:
        def inside(*args: Any, **kwargs: Any) -> Any:
            nonlocal database_seconds
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                database_seconds += time.perf_counter() - started

        return await hand_off(inside, *args, **kwargs)

    turn.db_call = timed_db_call  # type: ignore[assignment]
    from agents.conversations import conversation_start
    from agents.providers.anthropic import AnthropicProvider
    from agents.providers.openai import OpenAIProvider
    from tests.fakes.llm_server import FakeLLM, in_process_transport

    for name in ("openai", "anthropic"):
        for calls in (1, 10, 40):
            per_call = []
            database_share = []
            for _ in range(repeats):
                fake = FakeLLM()
                fake.script(name, _model(calls))
                transport = in_process_transport(fake, name)
                fake_seconds = 0.0

                def timed(request: Any, handle: Any = transport.handler) -> Any:
                    nonlocal fake_seconds
                    started = time.perf_counter()
                    try:
                        return handle(request)
                    finally:
                        fake_seconds += time.perf_counter() - started

                client = httpx2.AsyncClient(transport=httpx2.MockTransport(timed))
                provider: Any = (
                    OpenAIProvider(api_key="sk-bench", model="m", http_client=client)
                    if name == "openai"
                    else AnthropicProvider(
                        api_key="sk-bench", model="m", http_client=client
                    )
                )
                turn.provider_for = lambda agent, conversation, p=provider: p  # type: ignore[assignment]
                conversation = conversation_start(agent=agent, member=None)
                database_seconds = 0.0
                started = time.perf_counter()
                messages = asyncio.run(turn.turn_run(conversation, "busca arroz"))
                elapsed = time.perf_counter() - started - fake_seconds
                if messages[-1].text != "Listo.":
                    raise AssertionError(messages[-1].text)
                per_call.append(elapsed / calls * 1000)
                database_share.append(database_seconds / elapsed)
            print(
                f"{name:9} turn of {calls:2} sequential calls: "
                f"median {statistics.median(per_call):5.2f} ms per call "
                f"(min {min(per_call):5.2f}), "
                f"{statistics.median(database_share):.0%} of it database work"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", help="a DATABASE_URL; default a new SQLite file")
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    if options.database:
        from tests.bench.bench_dispatch import _create_postgres_database

        _create_postgres_database(options.database)
        run(options.database, options.repeats)
        return
    with tempfile.TemporaryDirectory() as folder:
        run(f"sqlite:///{folder}/bench.sqlite3", options.repeats)


if __name__ == "__main__":
    main()
