"""Benchmark: the staff inbox's first page with 10,000 pending actions across 20 gyms;
the requests of the gym shown come from 50 conversations of 400 messages each (a
member's question, the step, its results and the answer, 100 times), each asked in
the middle of its conversation.

Prints the SQL queries the page makes and the median server time of rendering it
(through Django's test client, so without network). Target: at most 10 queries and
under 50 ms.

Run: ``make bench`` or ``.venv/bin/python tests/bench/bench_inbox.py [--database URL]``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

GYMS = 20
ACTIONS = 10_000
CONVERSATIONS = 50
TURNS = 100


def _long_conversations(business: Any, member: Any) -> list[tuple[str, str]]:
    """The shown gym's conversations: for each, its key and the key of the step
    in the middle that asked for the request."""
    from agents.conversations import conversation_start
    from agents.models import Message
    from agents.services import agent_create

    agent = agent_create(business=business, name="Bench")
    asked = []
    for _ in range(CONVERSATIONS):
        conversation = conversation_start(agent=agent, member=member)
        messages = Message.objects.bulk_create(
            Message(conversation=conversation, role=role, text=f"{role} {turn}")
            for turn in range(TURNS)
            for role in ("member", "step", "tool_results", "assistant")
        )
        step = messages[4 * (TURNS // 2) + 1]
        asked.append((str(conversation.pk), str(step.pk)))
    return asked


def run(database_url: str, data_dir: str) -> None:
    os.environ.update(
        GYMNASIA_DATA_DIR=data_dir,
        DEBUG="0",
        SECRET_KEY="bench-" + "k" * 60,
        FIELD_ENCRYPTION_KEYS="tUYc8UzT6vPRQJ5m0tEuS7Kn2dJkPfvGm2NFMm6p0xY=",
        ALLOWED_HOSTS="testserver",
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="gymnasia.settings",
    )
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.utils import timezone

    from approvals.models import Decision
    from gymnasia.gyms.models import Business, Member
    from gymnasia.gyms.services import staff_role_grant
    from tools.models import ToolCallLog

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)  # as in production
    old = Business.objects.filter(slug__startswith="bench-inbox-")
    Decision.objects.filter(business__in=old).delete()
    ToolCallLog.objects.filter(business__in=old).delete()
    old.delete()
    gyms = [
        Business.objects.create(name=f"Bench gym {n}", slug=f"bench-inbox-{n}")
        for n in range(GYMS)
    ]
    members = [
        Member.objects.create(business=g, external_id=f"m-{g.pk}", name="Ana")
        for g in gyms
    ]
    asked = _long_conversations(gyms[0], members[0])
    # Each request is a call paused for staff, on its own row.
    expires_at = timezone.now() + datetime.timedelta(hours=24)
    ids = [uuid.uuid4() for _ in range(ACTIONS)]
    ToolCallLog.objects.bulk_create(
        ToolCallLog(
            id=ids[n],
            business=gyms[n % GYMS],
            member=members[n % GYMS],
            conversation_key=asked[n // GYMS % CONVERSATIONS][0]
            if n % GYMS == 0
            else f"c-{n}",
            message_key=asked[n // GYMS % CONVERSATIONS][1] if n % GYMS == 0 else "",
            tool_name="freeze_membership",
            effect="write",
            arguments={"start": "2027-08-01", "end": "2027-08-31"},
            action_key=f"k{n}",
            offered=True,
            valid=True,
            gated=True,
            expires_at=expires_at,
            status="pending_approval",
            verification="not_applied",
            result={"status": "pending_approval", "pending_action": str(ids[n])},
            steps=[{"step": "offered"}, {"step": "validated"}, {"step": "gated"}],
        )
        for n in range(ACTIONS)
    )
    if connection.vendor == "postgresql":
        # What autovacuum does soon after such a load: the earlier runs' rows
        # cleared away, and the planner's statistics.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    user, _ = User.objects.get_or_create(username="bench-inbox-staff")
    staff_role_grant(business=gyms[0], user=user, role="staff")
    client = Client()
    client.force_login(user)
    headers = {"X-Forwarded-Proto": "https"}
    client.get("/inbox/", headers=headers)  # warm-up
    queries: list[str] = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        queries.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = client.get("/inbox/", headers=headers)
    assert response.status_code == 200, response.status_code
    rows = response.content.decode().count('id="action-')
    timings = []
    for _ in range(30):
        started = time.perf_counter()
        client.get("/inbox/", headers=headers)
        timings.append((time.perf_counter() - started) * 1000)
    excerpts = response.content.decode().count('class="excerpt"')
    print(
        f"{connection.vendor}: inbox first page ({rows} rows shown of {ACTIONS // GYMS} "
        f"for this gym, {ACTIONS} in all; {excerpts} excerpts from conversations of "
        f"{4 * TURNS} messages): {len(queries)} SQL queries, "
        f"median {statistics.median(timings):.1f} ms server time"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", help="a DATABASE_URL; default a new SQLite file")
    options = parser.parse_args()
    from tests.bench.machine import speed_line

    print(speed_line())
    with tempfile.TemporaryDirectory() as folder:
        if options.database:
            from tests.bench.bench_dispatch import _create_postgres_database

            _create_postgres_database(options.database)
            run(options.database, folder)
        else:
            run(f"sqlite:///{folder}/bench.sqlite3", folder)


if __name__ == "__main__":
    main()
