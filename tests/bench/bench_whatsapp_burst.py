"""Benchmark: a burst of WhatsApp messages, acknowledged at once while the
model takes a second each, and every reply sent once.

The app runs under uvicorn (``manage.py serve``'s server, a process per core) on PostgreSQL and
Redis, with a Celery worker (a pool of threads) running the turns; the demo
agent is on the OpenAI adapter, pointed at a fake Responses API on loopback that
waits one second before each answer (``tests/bench/load.py``), and its WhatsApp
channel at the fake Graph API (``tests/fakes/whatsapp_graph.py``) in this
process. Two hundred members' numbers each post one signed message to the
webhook, in rounds: at 80 a second (the most a number carries by default,
Meta's throughput: inbound and outbound messages together), at 1,000 a second
(the most any number carries) and all at the same instant (more than Meta
delivers to one number). Each round prints the median, p95 and largest time
from a post being due to the webhook's 200, then the time until every reply was
taken by the Graph API, and checks that each number got exactly one.

Run: ``.venv/bin/python tests/bench/bench_whatsapp_burst.py [--database URL]
[--redis URL] [--messages 200] [--threads 50] [--senders N] [--rates 80,1000,0]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_turns import _free_port, _wait_until_up  # noqa: E402
from tests.bench.machine import speed_line  # noqa: E402

PROVIDER_DELAY = os.environ.get("BENCH_PROVIDER_DELAY", "1.0")


async def _post(port: int, path: str, body: bytes, headers: dict[str, str]) -> None:
    """One ``POST`` on a new connection, until its status line came."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        lines = [
            f"POST {path} HTTP/1.1",
            f"host: 127.0.0.1:{port}",
            f"content-length: {len(body)}",
            "connection: close",
            # As from the TLS proxy production runs behind (uvicorn trusts one
            # on loopback).
            "x-forwarded-proto: https",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        status = await reader.readline()
        assert status.split()[1] == b"200", status
    finally:
        writer.close()


async def _burst(
    port: int, path: str, deliveries: list, senders: int = 0, rate: float = 0
) -> list[float]:
    """Post every delivery, at most ``senders`` at a time (0: no limit), the
    ``n``-th starting ``n / rate`` seconds after the first (0: all at once).
    Each time runs from the moment its post was due, so a post kept waiting by
    the limit or a late event loop counts its wait."""
    gate = asyncio.Semaphore(senders or len(deliveries))
    begun = time.perf_counter()

    async def one(n: int, body: bytes, headers: dict[str, str]) -> float:
        due = begun + (n / rate if rate else 0)
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        async with gate:
            await _post(port, path, body, headers)
        return time.perf_counter() - due

    return list(
        await asyncio.gather(*(one(n, b, h) for n, (b, h) in enumerate(deliveries)))
    )


def _setup(fake, database_url: str, redis_url: str) -> tuple[str, dict[str, str]]:
    """Django on the database, the demo gym on the OpenAI adapter with its
    channel on the fake: the webhook's path and the environment of the app."""
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "bench-" + "k" * 60,
        "FIELD_ENCRYPTION_KEYS": "tUYc8UzT6vPRQJ5m0tEuS7Kn2dJkPfvGm2NFMm6p0xY=",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": redis_url,
        "OPENAI_API_KEY": "sk-bench",
        "WHATSAPP_API_BASES": fake.base_url,
        "DJANGO_SETTINGS_MODULE": "gymnasia.settings",
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from agents.models import Agent, Conversation
    from agents.whatsapp.services import whatsapp_channel_connect, whatsapp_webhook_path
    from gymnasia.celery import app

    call_command("migrate", verbosity=0)
    app.control.purge()
    call_command("seed_demo", provider="openai", stdout=open(os.devnull, "w"))
    agent = Agent.objects.get(business__slug="gymnasia-demo")
    Conversation.objects.filter(agent=agent, channel="whatsapp").delete()
    channel = whatsapp_channel_connect(
        agent=agent,
        phone_number_id=fake.phone_number_id,
        business_account_id=fake.waba_id,
        access_token=fake.access_token,
        app_secret=fake.app_secret,
        verify_token=fake.verify_token,
        api_base=fake.base_url,
    )
    return whatsapp_webhook_path(channel), env


def _started(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


def run(
    database_url: str,
    redis_url: str,
    messages: int,
    threads: int,
    senders: int,
    rates: list[float],
) -> None:
    from tests.fakes.whatsapp_graph import GraphFake

    fake = GraphFake()
    path, env = _setup(fake, database_url, redis_url)
    provider_port, web_port = _free_port(), _free_port()
    env["OPENAI_BASE_URL"] = f"http://127.0.0.1:{provider_port}/v1"
    logs = Path(tempfile.mkdtemp(prefix="bench-whatsapp-"))
    provider = ["tests.bench.load", "--port", str(provider_port)]
    web = ["uvicorn", "gymnasia.asgi:application", "--port", str(web_port)]
    web += ["--workers", str(os.cpu_count() or 1)]  # as ``serve`` runs it
    worker = ["celery", "-A", "gymnasia", "worker", "--pool=threads"]
    quiet = ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    processes = [
        _started(
            [sys.executable, "-m", *provider, "--delay", PROVIDER_DELAY],
            env,
            logs / "provider.log",
        ),
        _started(
            [sys.executable, "-m", *web, "--log-level", "warning", "--lifespan", "off"],
            env,
            logs / "web.log",
        ),
        _started(
            [sys.executable, "-m", *worker, f"--concurrency={threads}", *quiet],
            env,
            logs / "worker.log",
        ),
    ]
    try:
        _wait_until_up(provider_port, "the slow provider")
        _wait_until_up(web_port, "uvicorn")
        warm = [f"3469{n:07d}" for n in range(5)]
        asyncio.run(
            _burst(web_port, path, [fake.inbound_text(n, "hola") for n in warm])
        )
        _wait_for_replies(fake, warm, 60)
        for round_number, rate in enumerate(rates):
            _round(fake, web_port, path, round_number, messages, senders, rate)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
        fake.close()
    print(f"({threads} worker threads; logs in {logs})")


def _round(
    fake, port: int, path: str, round_number: int, messages: int, senders: int, rate
) -> None:
    """One burst from numbers never seen before, then its replies counted."""
    numbers = [f"34{60 + round_number}{n:07d}" for n in range(messages)]
    deliveries = [fake.inbound_text(n, "hola") for n in numbers]
    started = time.perf_counter()
    acks = asyncio.run(_burst(port, path, deliveries, senders, rate))
    acked = time.perf_counter() - started
    _wait_for_replies(fake, numbers, 300)
    replied = time.perf_counter() - started
    time.sleep(2)  # a reply sent twice would show now
    twice = [n for n in numbers if len(fake.texts_to(n)) != 1]
    ordered = sorted(acks)
    arriving = f"{rate:g} a second" if rate else "all at the same instant"
    limit = f", at most {senders} at a time" if senders else ""
    print(
        f"postgresql: {messages} WhatsApp messages arriving {arriving}{limit}, "
        f"model {PROVIDER_DELAY} s each: acknowledged median "
        f"{statistics.median(acks) * 1000:.1f} ms, p95 "
        f"{ordered[int(messages * 0.95)] * 1000:.1f} ms, largest "
        f"{ordered[-1] * 1000:.1f} ms (the last in {acked:.2f} s); every reply "
        f"sent {replied:.2f} s after the first post; numbers without exactly one "
        f"reply: {len(twice)}"
    )
    assert not twice, twice


def _wait_for_replies(fake, numbers: list[str], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while any(not fake.texts_to(n) for n in numbers):
        if time.monotonic() > deadline:
            missing = sum(1 for n in numbers if not fake.texts_to(n))
            raise RuntimeError(f"{missing} replies never came")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--database",
        default="postgres://postgres@127.0.0.1:5432/gymnasia_bench_whatsapp",
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/1")
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--threads", type=int, default=50)
    parser.add_argument(
        "--senders", type=int, default=0, help="posts at a time; 0: no limit"
    )
    parser.add_argument(
        "--rates",
        default="80,1000,0",
        help="a round per rate: messages a second; 0: all at the same instant",
    )
    options = parser.parse_args()
    from tests.bench.bench_dispatch import _create_postgres_database

    _create_postgres_database(options.database)
    print(speed_line())
    run(
        options.database,
        options.redis,
        options.messages,
        options.threads,
        options.senders,
        [float(rate) for rate in options.rates.split(",")],
    )


if __name__ == "__main__":
    main()
