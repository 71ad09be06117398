"""Benchmark: from a staff approval to the handler starting, through Celery and Redis.

Starts a real Celery worker on a PostgreSQL database and Redis, approves gated
requests one at a time, and measures from the approval's commit to the moment the
worker claimed the request's call to run it (its *executing* event, just before
the handler runs). Prints
the median and p95.

Run: ``make bench`` or ``.venv/bin/python tests/bench/bench_approval_latency.py
[--database URL] [--redis URL] [--approvals 50]``.
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


def run(database_url: str, redis_url: str, approvals: int) -> None:
    env = django_on(database_url, redis_url)
    from django.db import connection
    from django.utils import timezone

    from approvals.services import pending_action_approve
    from tests.factories import MembershipFactory, StaffRoleFactory
    from tools.dispatcher import CallContext, dispatch_tool_call
    from tools.models import ToolCallEvent
    from tools.selection import ToolPolicy
    from tools.types import ToolCall

    today = timezone.localdate()
    run_id = time.time_ns()
    member = MembershipFactory(
        ends_on=today.replace(year=today.year + 5),
        member__business__slug=f"bench-approvals-{run_id}",
        member__external_id=f"bench-{run_id}",
    ).member
    staff = StaffRoleFactory(
        business=member.business, role="staff", user__username=f"bench-{run_id}"
    ).user
    context = CallContext(
        business=member.business,
        member=member,
        conversation_key=f"bench-{run_id}",
        offered={"freeze_membership": ToolPolicy(mode="gated")},
    )
    worker = worker_started(
        Path(tempfile.gettempdir()) / "bench-approval-worker.log", env
    )
    try:
        time.sleep(4)  # the worker connects
        latencies = []
        for n in range(approvals):
            day = today + datetime.timedelta(days=2 + n * 2)
            result = dispatch_tool_call(
                ToolCall(
                    id=f"c{n}",
                    name="freeze_membership",
                    arguments={"start": day.isoformat(), "end": day.isoformat()},
                ),
                context,
            )
            action_id = result.payload["pending_action"]
            approved = pending_action_approve(action_id=action_id, user=staff)
            decided_at = approved.decision.decided_at
            assert decided_at is not None
            deadline = time.monotonic() + 30
            call_id = approved.pk  # the request is the call itself
            while True:
                started = (
                    ToolCallEvent.objects.filter(call_id=call_id, kind="executing")
                    .values_list("created_at", flat=True)
                    .first()
                )
                if started is not None:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("the worker did not start the action")
                time.sleep(0.002)
            latencies.append((started - decided_at).total_seconds() * 1000)
    finally:
        worker.terminate()
        worker.wait(timeout=20)
        connection.close()
    ordered = sorted(latencies)
    print(
        f"{connection.vendor} + Redis: approval to handler start over {len(latencies)} "
        f"approvals: median {statistics.median(latencies):.1f} ms, "
        f"p95 {ordered[int(len(ordered) * 0.95)]:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--database",
        default="postgres://postgres@127.0.0.1:5432/gymnasia_bench_approvals",
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/1")
    parser.add_argument("--approvals", type=int, default=50)
    options = parser.parse_args()
    from tests.bench.bench_dispatch import _create_postgres_database

    _create_postgres_database(options.database)
    run(options.database, options.redis, options.approvals)


if __name__ == "__main__":
    main()
