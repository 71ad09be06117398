"""Benchmark: from a request queued for staff to its mail accepted by an SMTP
server, through beat, Celery, Redis and PostgreSQL.

Starts a real Celery worker with beat (as ``serve`` runs it) on a PostgreSQL
database and Redis, with its mails going to an SMTP server on loopback in this
process; queues gated requests one at a time, each at a gym of its own (a
person gets at most one mail a minute, so one gym's second request would wait
for the minute by design), and measures from the request's commit to the
moment the server accepted its mail. Prints the median and p95.

Run: ``make bench`` or ``.venv/bin/python tests/bench/bench_notice_latency.py
[--database URL] [--redis URL] [--requests 30]``.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.celery_worker import django_on, worker_started  # noqa: E402


def run(database_url: str, redis_url: str, requests: int) -> None:
    env = django_on(database_url, redis_url)
    from django.db import connection
    from django.utils import timezone

    from tests.factories import MembershipFactory, StaffRoleFactory, UserFactory
    from tests.smtp_server import smtp_server
    from tools.dispatcher import CallContext, dispatch_tool_call
    from tools.selection import ToolPolicy
    from tools.types import ToolCall

    today = timezone.localdate()
    run_id = time.time_ns()
    latencies = []
    data = Path(tempfile.mkdtemp(prefix="bench-notices-"))
    with smtp_server() as (port, inbox):
        worker = worker_started(
            data / "worker.log",
            {
                **env,
                "EMAIL_HOST": "127.0.0.1",
                "EMAIL_PORT": str(port),
                "GYMNASIA_DATA_DIR": str(data),
            },
            beat=True,
        )
        try:
            time.sleep(5)  # the worker connects and beat starts
            for n in range(requests):
                member = MembershipFactory(
                    ends_on=today.replace(year=today.year + 5),
                    member__business__slug=f"bench-notices-{run_id}-{n}",
                    member__external_id=f"bench-{run_id}-{n}",
                ).member
                StaffRoleFactory(
                    business=member.business,
                    role="staff",
                    user=UserFactory(
                        username=f"bench-{run_id}-{n}", email=f"staff{n}@example.com"
                    ),
                )
                context = CallContext(
                    business=member.business,
                    member=member,
                    conversation_key=f"bench-{run_id}-{n}",
                    offered={"freeze_membership": ToolPolicy(mode="gated")},
                )
                day = (today + datetime.timedelta(days=3)).isoformat()
                arrived = len(inbox.mails)
                result = dispatch_tool_call(
                    ToolCall(
                        id=f"c{n}",
                        name="freeze_membership",
                        arguments={"start": day, "end": day},
                    ),
                    context,
                )
                queued = time.monotonic()
                assert result.status == "pending_approval", result
                mail = inbox.wait(arrived + 1, seconds=30)[arrived]
                latencies.append((mail.at - queued) * 1000)
                time.sleep(0.37)  # requests do not arrive in step with beat's ticks
        finally:
            worker.terminate()
            worker.wait(timeout=20)
            connection.close()
    ordered = sorted(latencies)
    print(
        f"{connection.vendor} + Redis: request queued to mail accepted over "
        f"{len(latencies)} requests: median {statistics.median(latencies):.0f} ms, "
        f"p95 {ordered[int(len(ordered) * 0.95)]:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--database",
        default="postgres://postgres@127.0.0.1:5432/gymnasia_bench_notices",
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/1")
    parser.add_argument("--requests", type=int, default=30)
    options = parser.parse_args()
    from tests.bench.bench_dispatch import _create_postgres_database

    _create_postgres_database(options.database)
    run(options.database, options.redis, options.requests)


if __name__ == "__main__":
    main()
