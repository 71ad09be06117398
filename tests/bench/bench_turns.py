"""Benchmark: 200 concurrent turns against a provider that takes one second to answer.

The app runs under uvicorn (one process, as ``manage.py serve`` runs it) with the demo
agent on the OpenAI adapter, pointed at a fake Responses API on loopback that waits
one second before each answer (``tests/bench/load.py``, in a process of its own, with
keep-alive as the real API has). Two hundred conversations each send one message at
the same moment (JSON mode); the benchmark prints the wall time for all of them, the
median and p95 latency of one turn, and the CPU the web process spent on them. A
slow provider must not hold a worker: the target is under 3 seconds in total.

Run: ``make bench`` or ``DEBUG=1 .venv/bin/python tests/bench/bench_turns.py
[--database URL] [--turns 200]``.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
_WARM_UP = 5
PROVIDER_DELAY = os.environ.get("BENCH_PROVIDER_DELAY", "1.0")


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


def run(database_url: str, turns: int) -> None:
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
        env.pop("REDIS_URL", None)
        env.pop("CELERY_BROKER_URL", None)
        os.environ.update(env)
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        call_command("seed_demo", provider="openai", stdout=open(os.devnull, "w"))
        from agents.conversations import conversation_start, conversation_token
        from agents.models import Agent

        agent = Agent.objects.get(business__slug="gymnasia-demo")
        conversations = []
        for _ in range(turns):
            conversation = conversation_start(agent=agent, member=None)
            conversations.append(
                (str(conversation.pk), conversation_token(conversation)[0])
            )
        from django.db import connections

        connections.close_all()

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
                os.environ.get("BENCH_WEB_WORKERS", "1"),
            ],
            cwd=ROOT,
            env=env,
        )
        try:
            _wait_until_up(port, "uvicorn")
            asyncio.run(_send_all(port, conversations[:_WARM_UP]))
            own_before = resource.getrusage(resource.RUSAGE_SELF)
            server_before = _process_cpu(server.pid)
            started = time.perf_counter()
            latencies = asyncio.run(_send_all(port, conversations[_WARM_UP:]))
            total = time.perf_counter() - started
            server_turns_cpu = _process_cpu(server.pid) - server_before
            own_after = resource.getrusage(resource.RUSAGE_SELF)
        finally:
            server.terminate()
            server.wait(timeout=20)
        server_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        own_cpu = (own_after.ru_utime + own_after.ru_stime) - (
            own_before.ru_utime + own_before.ru_stime
        )
        measured = turns - _WARM_UP
        print(
            f"CPU: web server {server_cpu.ru_utime + server_cpu.ru_stime:.2f} s (whole life), "
            f"{server_turns_cpu:.2f} s during the turns "
            f"({server_turns_cpu / measured * 1000:.1f} ms per turn); "
            f"load generator {own_cpu:.2f} s, "
            f"slow provider {_process_cpu(provider.pid):.2f} s (whole life)"
        )
    finally:
        provider.terminate()
        provider.wait(timeout=20)
    vendor = "postgresql" if database_url.startswith("postgres") else "sqlite"
    print(
        f"{vendor}: {len(latencies)} concurrent turns, provider {PROVIDER_DELAY} s each: "
        f"all done in {total:.2f} s; per turn median {statistics.median(latencies):.2f} s, "
        f"p95 {sorted(latencies)[int(len(latencies) * 0.95)]:.2f} s"
    )


def _process_cpu(pid: int) -> float:
    """User plus system CPU seconds a process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    options = parser.parse_args()
    turns = options.turns + _WARM_UP
    if options.database:
        from tests.bench.bench_dispatch import _create_postgres_database

        _create_postgres_database(options.database)
        run(options.database, turns)
        return
    with tempfile.TemporaryDirectory() as folder:
        run(f"sqlite:///{folder}/bench.sqlite3", turns)


if __name__ == "__main__":
    main()
