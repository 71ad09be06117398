"""Benchmark of the dispatcher, end to end: offered check, validation, duplicate
check, a handler on a trivial in-memory client, verification and the log rows.

Run: ``make bench`` (SQLite, then PostgreSQL at ``BENCH_DATABASE_URL``), or
``DEBUG=1 .venv/bin/python tests/bench/bench_dispatch.py [--database URL]``. A
PostgreSQL database named in the URL is created when missing.

Prints, per database: the median and p95 microseconds per call; the dispatcher's own
work, which is the call's time less the time spent persisting (writing the log row,
claiming the action: measured apart by timing those two functions); the SQL queries
per call; and the per-call median for turns of 1, 10 and 40 calls.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _create_postgres_database(database_url: str) -> None:
    """Create the benchmark's own PostgreSQL database when it does not exist."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(maintenance, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            connection.execute(
                sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
            )


def _configure(database_url: str) -> None:
    if database_url.startswith(("postgres://", "postgresql://")):
        _create_postgres_database(database_url)
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gymnasia.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.conf import settings

    settings.DEBUG = False  # production-like: no query recording
    # The migration graph loaded above is set-up garbage a server process would not
    # hold: collect it and keep the survivors out of the collector's way.
    gc.collect()
    gc.freeze()


class MemoryClient:
    """A trivial integration kept in a dict."""

    def __init__(self) -> None:
        self.rows: dict[str, float] = {}

    def search(self, query: str) -> list[dict[str, Any]]:
        return [{"item_id": 1, "name": query, "amount": 1.5}]

    def put(self, key: str, amount: float) -> dict[str, Any]:
        self.rows[key] = amount
        return {"key": key, "amount": amount}

    def get(self, key: str) -> float | None:
        return self.rows.get(key)


def _registry() -> Any:
    from tools.registry import ToolDeclaration, build_registry
    from tools.types import OK, VERIFIED, Outcome

    def read(ctx: Any, args: dict[str, Any]) -> Outcome:
        return Outcome(OK, {"items": ctx.client.search(args["query"])})

    def write(ctx: Any, args: dict[str, Any]) -> Outcome:
        receipt = ctx.client.put(args["key"], args["amount"])
        return Outcome(OK, {"saved": receipt}, receipt=receipt)

    def verify(ctx: Any, args: dict[str, Any], outcome: Outcome) -> str:
        return (
            VERIFIED if ctx.client.get(args["key"]) == args["amount"] else "not_applied"
        )

    def declaration(
        name: str, effect: str, properties: dict[str, Any]
    ) -> ToolDeclaration:
        return ToolDeclaration(
            name=name,
            description=name,
            parameters={
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
            effect=effect,  # type: ignore[arg-type]
            needs_member=False,
            integration="memory",
        )

    return build_registry(
        [
            declaration(
                "bench_read", "read", {"query": {"type": "string", "maxLength": 50}}
            ),
            declaration(
                "bench_write",
                "write",
                {"key": {"type": "string"}, "amount": {"type": "number", "minimum": 0}},
            ),
        ],
        {"bench_read": read, "bench_write": write},
        {"bench_write": verify},
    )


class QueryCounter:
    def __init__(self) -> None:
        self.count = 0

    def __call__(
        self, execute: Any, sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        self.count += 1
        return execute(sql, params, many, context)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def _summary(label: str, micros: list[float], queries: list[int] | None = None) -> str:
    line = (
        f"{label:34} median {statistics.median(micros):6.0f} µs"
        f"   p95 {_percentile(micros, 0.95):6.0f} µs"
    )
    if queries is not None:
        line += f"   SQL queries per call {max(queries)}"
    return line


def run(database_url: str, calls: int) -> None:
    _configure(database_url)
    from django.db import connection

    import tools.dispatcher as dispatcher
    import tools.execution as execution
    from gymnasia.gyms.models import Business
    from tools.dispatcher import CallContext, dispatch_tool_call
    from tools.selection import ToolPolicy
    from tools.types import ToolCall

    business, _ = Business.objects.get_or_create(
        slug="bench", defaults={"name": "Bench"}
    )
    client = MemoryClient()
    registry = _registry()
    run_id = time.time_ns()

    def context(conversation: str) -> CallContext:
        return CallContext(
            business=business,
            member=None,
            conversation_key=conversation,
            offered={
                "bench_read": ToolPolicy("auto"),
                "bench_write": ToolPolicy("auto"),
            },
            registry=registry,
            clients=lambda kind, business: client,
        )

    def call(kind: str, n: int) -> ToolCall:
        if kind == "read":
            return ToolCall(
                id=f"c{n}", name="bench_read", arguments='{"query": "arroz"}'
            )
        return ToolCall(
            id=f"c{n}",
            name="bench_write",
            arguments=f'{{"key": "k{run_id}-{n}", "amount": {abs(n)}.5}}',
        )

    def timed(kind: str, ctx: CallContext, count: int, offset: int) -> list[float]:
        micros = []
        for n in range(offset, offset + count):
            started = time.perf_counter()
            result = dispatch_tool_call(call(kind, n), ctx)
            micros.append((time.perf_counter() - started) * 1e6)
            assert result.status == "ok", result.payload
        return micros

    print(f"\n== {connection.vendor}, {calls} calls each")
    # 1. The dispatcher's own work: persistence switched off (the log row and the
    #    action claim replaced by no-ops, so no SQL runs at all).
    record, claim = execution.tool_call_record, dispatcher.tool_call_claim
    # (tool_call_record says whether the row was written: a no-op that wrote it.)
    execution.tool_call_record = lambda log, unstored=None: True  # type: ignore[assignment]
    dispatcher.tool_call_claim = lambda log, again_for="": setattr(  # type: ignore[assignment]
        log._state, "adding", False
    )
    try:
        for kind in ("read", "write"):
            ctx = context(f"bench-{run_id}-own-{kind}")
            timed(kind, ctx, 200, -1000)
            print(
                _summary(
                    f"{kind}, own work (no persistence)", timed(kind, ctx, calls, 0)
                )
            )
    finally:
        execution.tool_call_record, dispatcher.tool_call_claim = record, claim

    # 2. End to end with the verification log written.
    for kind in ("read", "write"):
        ctx = context(f"bench-{run_id}-{kind}")
        timed(kind, ctx, 50, -100)
        micros = timed(kind, ctx, calls, 0)
        queries = []
        for n in range(calls, calls + 100):
            counter = QueryCounter()
            with connection.execute_wrapper(counter):
                dispatch_tool_call(call(kind, n), ctx)
            queries.append(counter.count)
        print(_summary(f"{kind}, log written", micros, queries))

    # 3. Cost per call by the number of calls in one turn.
    for kind in ("read", "write"):
        for size in (1, 10, 40):
            per_call = []
            for turn in range(max(10, 400 // size)):
                ctx = context(f"bench-{run_id}-turn-{kind}-{size}-{turn}")
                started = time.perf_counter()
                for n in range(size):
                    dispatch_tool_call(call(kind, 10_000 + turn * 100 + n), ctx)
                per_call.append((time.perf_counter() - started) / size * 1e6)
            print(_summary(f"{kind}, turn of {size} calls, per call", per_call))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", help="a DATABASE_URL; default a new SQLite file")
    parser.add_argument("--calls", type=int, default=1000)
    options = parser.parse_args()
    if options.database:
        run(options.database, options.calls)
        return
    with tempfile.TemporaryDirectory() as folder:
        run(f"sqlite:///{folder}/bench.sqlite3", options.calls)


if __name__ == "__main__":
    main()
