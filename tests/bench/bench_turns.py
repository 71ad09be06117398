"""Benchmark: 200 concurrent turns against a provider that takes one second to answer.

The app runs under uvicorn as ``manage.py serve --workers N`` runs it: one web process
per core by default (``--workers``), sharing rate limits through Redis
(``BENCH_REDIS_URL``, default ``redis://127.0.0.1:6379/14``; ``--workers 1`` runs the
embedded default's single process without it). The demo agent is on the OpenAI
adapter, pointed at a fake Responses API on loopback that waits one second before
each answer (``tests/bench/load.py``, in a process of its own, with keep-alive as the
real API has). Two hundred conversations each send one message at the same moment
(JSON mode); the benchmark prints the wall time for all of them, the median and p95
latency of one turn, and the CPU the web processes spent on them. A slow provider
must not hold a worker: the target is under 3 seconds in total.

Run: ``make bench`` or ``DEBUG=1 .venv/bin/python tests/bench/bench_turns.py
[--database URL] [--turns 200] [--rounds 5] [--workers N]``. The figure moves from
run to run on a shared machine; with ``--rounds`` each round starts a new server and
the last line gives the median.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
_WARM_UP = 10
PROVIDER_DELAY = os.environ.get("BENCH_PROVIDER_DELAY", "1.0")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _send_all(port: int, conversations: list[tuple[str, str]]) -> list[float]:
    from tests.bench.load import REPLY_TEXT, post_json

    async def one(index: int, conversation: str, token: str) -> float:
        started = time.perf_counter()
        status, answer = await post_json(
            port,
            f"/api/v1/conversations/{conversation}/messages",
            {"text": "hola"},
            # As from the TLS proxy production runs behind, one member (and
            # address) per conversation; uvicorn trusts a proxy on loopback.
            {
                "authorization": f"Bearer {token}",
                "x-forwarded-proto": "https",
                "x-forwarded-for": f"10.1.{index // 250}.{index % 250 + 1}",
            },
        )
        reply = answer["messages"][-1] if status == 200 else answer
        if reply.get("role") != "assistant" or reply.get("text") != REPLY_TEXT:
            raise AssertionError(f"unexpected reply ({status}): {reply}")
        return time.perf_counter() - started

    return list(
        await asyncio.gather(*(one(i, c, t) for i, (c, t) in enumerate(conversations)))
    )


@dataclass
class Round:
    total: float
    latencies: list[float]
    turn_cpu: float  # the web processes' CPU seconds during the turns
    server_cpu: float  # theirs from start to the end of the turns
    own_cpu: float  # this process's: the load generator


def run(database_url: str, turns: int, rounds: int, workers: int) -> None:
    provider_port = _free_port()
    provider = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.bench.load",
            "--port",
            str(provider_port),
            "--delay",
            PROVIDER_DELAY,
        ],
        cwd=ROOT,
    )
    vendor = "postgresql" if database_url.startswith("postgres") else "sqlite"
    try:
        _wait_until_up(provider_port, "the slow provider")
        env = {
            **os.environ,
            # Production-like: no debug cursor, no query log.
            "DEBUG": "0",
            "SECRET_KEY": "bench-" + "k" * 60,
            "FIELD_ENCRYPTION_KEYS": "tUYc8UzT6vPRQJ5m0tEuS7Kn2dJkPfvGm2NFMm6p0xY=",
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATABASE_URL": database_url,
            "OPENAI_API_KEY": "sk-bench",
            "DJANGO_SETTINGS_MODULE": "gymnasia.settings",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{provider_port}/v1",
        }
        env.pop("CELERY_BROKER_URL", None)
        if workers > 1:
            env["REDIS_URL"] = REDIS_URL
        else:
            env.pop("REDIS_URL", None)
        os.environ.update(env)
        conversations = _conversations(rounds * (turns + _WARM_UP))
        results = []
        for number in range(rounds):
            mine = conversations[number * (turns + _WARM_UP) :][: turns + _WARM_UP]
            result = _round(env, mine, workers)
            results.append(result)
            print(
                f"CPU: web server ({workers} process{'es' if workers > 1 else ''}) "
                f"{result.server_cpu:.2f} s (start to end of the "
                f"turns), {result.turn_cpu:.2f} s during the turns "
                f"({result.turn_cpu / turns * 1000:.1f} ms per turn); "
                f"load generator {result.own_cpu:.2f} s"
            )
            print(
                f"{vendor}: {turns} concurrent turns, provider {PROVIDER_DELAY} s "
                f"each: all done in {result.total:.2f} s; per turn median "
                f"{statistics.median(result.latencies):.2f} s, p95 "
                f"{sorted(result.latencies)[int(turns * 0.95)]:.2f} s"
            )
        print(f"slow provider: {_process_cpu(provider.pid):.2f} s of CPU in all")
    finally:
        provider.terminate()
        provider.wait(timeout=20)
    if rounds > 1:
        totals = [r.total for r in results]
        print(
            f"{vendor}: {rounds} rounds of {turns} concurrent turns: all done in "
            f"median {statistics.median(totals):.2f} s "
            f"({min(totals):.2f}–{max(totals):.2f}); web CPU per turn median "
            f"{statistics.median(r.turn_cpu for r in results) / turns * 1000:.1f} ms"
        )


def _conversations(count: int) -> list[tuple[str, str]]:
    """Migrate, seed the demo gym on the OpenAI adapter, and start ``count``
    anonymous conversations: (id, bearer token) each."""
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("seed_demo", provider="openai", stdout=open(os.devnull, "w"))
    from django.db import connections

    from agents.conversations import conversation_start, conversation_token
    from agents.models import Agent

    agent = Agent.objects.get(business__slug="gymnasia-demo")
    started = []
    for _ in range(count):
        conversation = conversation_start(agent=agent, member=None)
        started.append((str(conversation.pk), conversation_token(conversation)[0]))
    connections.close_all()
    return started


def _round(
    env: dict[str, str], conversations: list[tuple[str, str]], workers: int
) -> Round:
    """A new uvicorn, a few warm-up turns, then the rest of ``conversations``
    at once."""
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "gymnasia.asgi:application",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--lifespan",
            "off",
            "--workers",
            str(workers),
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        _wait_until_up(port, "uvicorn")
        asyncio.run(_send_all(port, conversations[:_WARM_UP]))
        own_before = resource.getrusage(resource.RUSAGE_SELF)
        server_before = _tree_cpu(server.pid)
        started = time.perf_counter()
        latencies = asyncio.run(_send_all(port, conversations[_WARM_UP:]))
        total = time.perf_counter() - started
        server_after = _tree_cpu(server.pid)
        own_after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        server.terminate()
        server.wait(timeout=20)
    return Round(
        total=total,
        latencies=latencies,
        turn_cpu=server_after - server_before,
        server_cpu=server_after,
        own_cpu=(own_after.ru_utime + own_after.ru_stime)
        - (own_before.ru_utime + own_before.ru_stime),
    )


def _process_cpu(pid: int) -> float:
    """User plus system CPU seconds a process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_cpu(pid: int) -> float:
    """CPU seconds of a process and all its descendants still running (Linux)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(
                stat.read_text().rsplit(")", 1)[1].split()[1]
            )
        except (OSError, ValueError):
            continue
    tree, grown = {pid}, True
    while grown:
        more = {child for child, parent in parents.items() if parent in tree}
        grown = not more <= tree
        tree |= more
    total = 0.0
    for member in tree:
        try:
            total += _process_cpu(member)
        except OSError:  # it ended in the meantime
            continue
    return total


def _wait_until_up(port: int, what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", help="a DATABASE_URL; default a new SQLite file")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument(
        "--rounds", type=int, default=1, help="each with a new server; default 1"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="web processes; default one per core (more than one uses Redis)",
    )
    options = parser.parse_args()
    from tests.bench.machine import speed_line

    print(speed_line())
    if options.database:
        from tests.bench.bench_dispatch import _create_postgres_database

        _create_postgres_database(options.database)
        run(options.database, options.turns, options.rounds, options.workers)
        return
    with tempfile.TemporaryDirectory() as folder:
        run(
            f"sqlite:///{folder}/bench.sqlite3",
            options.turns,
            options.rounds,
            options.workers,
        )


if __name__ == "__main__":
    main()
