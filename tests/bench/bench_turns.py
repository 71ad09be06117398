"""Benchmark: 200 concurrent turns against a provider that takes one second to answer.

The app runs under uvicorn (one process, as ``manage.py serve`` runs it) with the demo
agent on the OpenAI adapter, pointed at a fake Responses API on loopback that waits
one second before each answer. Two hundred conversations each send one message at the
same moment (JSON mode); the benchmark prints the wall time for all of them and the
median and p95 latency of one turn. A slow provider must not hold a worker: the
target is under 3 seconds in total.

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _send_all(base: str, conversations: list[tuple[str, str]]) -> list[float]:
    import httpx

    limits = httpx.Limits(max_connections=len(conversations) + 10)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:

        async def one(index: int, conversation: str, token: str) -> float:
            started = time.perf_counter()
            response = await client.post(
                f"/api/v1/conversations/{conversation}/messages",
                json={"text": "hola"},
                # As from the TLS proxy production runs behind, one member (and
                # address) per conversation; uvicorn trusts a proxy on loopback.
                headers={
                    "Authorization": f"Bearer {token}",
                    "X-Forwarded-Proto": "https",
                    "X-Forwarded-For": f"10.1.{index // 250}.{index % 250 + 1}",
                },
            )
            response.raise_for_status()
            reply = response.json()["messages"][-1]
            if (
                reply["role"] != "assistant"
                or reply["text"] != "Hola, soy el asistente."
            ):
                raise AssertionError(f"unexpected reply: {reply}")
            return time.perf_counter() - started

        return list(
            await asyncio.gather(
                *(one(i, c, t) for i, (c, t) in enumerate(conversations))
            )
        )


def run(database_url: str, turns: int) -> None:
    from tests.fakes.llm_server import Step, running_fake_llm

    with running_fake_llm() as fake:
        fake.script(
            "openai",
            lambda body: Step(
                text="Hola, soy el asistente.",
                delay=float(os.environ.get("BENCH_PROVIDER_DELAY", "1.0")),
            ),
        )
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
            "OPENAI_BASE_URL": f"{fake.base_url}/v1",
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
            _wait_until_up(port)
            asyncio.run(
                _send_all(f"http://127.0.0.1:{port}", conversations[:5])
            )  # warm-up
            own_before = resource.getrusage(resource.RUSAGE_SELF)
            started = time.perf_counter()
            latencies = asyncio.run(
                _send_all(f"http://127.0.0.1:{port}", conversations[5:])
            )
            total = time.perf_counter() - started
            own_after = resource.getrusage(resource.RUSAGE_SELF)
        finally:
            server.terminate()
            server.wait(timeout=20)
        server_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        own_cpu = (own_after.ru_utime + own_after.ru_stime) - (
            own_before.ru_utime + own_before.ru_stime
        )
        print(
            f"CPU: web server {server_cpu.ru_utime + server_cpu.ru_stime:.2f} s (whole life), "
            f"load generator and fake provider {own_cpu:.2f} s"
        )
    vendor = "postgresql" if database_url.startswith("postgres") else "sqlite"
    print(
        f"{vendor}: {len(latencies)} concurrent turns, provider 1.0 s each: "
        f"all done in {total:.2f} s; per turn median {statistics.median(latencies):.2f} s, "
        f"p95 {sorted(latencies)[int(len(latencies) * 0.95)]:.2f} s"
    )


def _wait_until_up(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("uvicorn did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", help="a DATABASE_URL; default a new SQLite file")
    parser.add_argument("--turns", type=int, default=200)
    options = parser.parse_args()
    turns = options.turns + 5
    if options.database:
        from tests.bench.bench_dispatch import _create_postgres_database

        _create_postgres_database(options.database)
        run(options.database, turns)
        return
    with tempfile.TemporaryDirectory() as folder:
        run(f"sqlite:///{folder}/bench.sqlite3", turns)


if __name__ == "__main__":
    main()
