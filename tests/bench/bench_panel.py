"""Benchmark: the owners' Panel for 30 days, over 1,000,000 tool calls and
200,000 model steps (with 100,000 members' messages) of 5 gyms spread over 120
days; 2 % of the calls are requests for staff, each decided.

The rows are made by PostgreSQL itself (``INSERT … SELECT`` over
``generate_series``), then ``VACUUM ANALYZE`` as autovacuum would soon do. Prints
the SQL queries the page makes, the median server time of rendering it (through
Django's test client, so without network), and with ``--explain`` the plans of
its two largest queries. Target: at most 15 queries and under 300 ms.

Run: ``make bench`` or ``.venv/bin/python tests/bench/bench_panel.py --database
postgres://postgres@127.0.0.1:5432/gymnasia_bench_panel [--calls N] [--steps N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

GYMS = 5
DAYS = 120
CONVERSATIONS = 20_000

#: Tools and statuses the calls take, in turn (most calls succeed).
TOOLS = "{search_foods,list_classes,book_class,add_food_to_meal,get_membership,refund_payment}"
STATUSES = "{ok,ok,ok,ok,ok,ok,ok,no_results,failed,unavailable,unknown_outcome,invalid_arguments,duplicate,ok}"


def _seed(
    cursor: Any, gyms: list[int], agents: list[int], calls: int, steps: int
) -> None:
    """Conversations, messages, calls, decisions: days spread evenly back from
    now, gyms in turn."""
    g, a = f"ARRAY{gyms}", f"ARRAY{agents}"
    cursor.execute(
        f"""INSERT INTO agents_conversation
        (id, agent_id, business_id, language, created_at, turn_holder)
        SELECT gen_random_uuid(), ({a})[1 + n % {GYMS}], ({g})[1 + n % {GYMS}],
               'es', now() - (n % {DAYS}) * interval '1 day' - (n % 1440) * interval '1 minute', ''
        FROM generate_series(1, {CONVERSATIONS}) AS n"""  # noqa: S608 (our own numbers)
    )
    cursor.execute(
        f"""INSERT INTO agents_message
        (conversation_id, role, text, content, created_at, model,
         input_tokens, cached_input_tokens, output_tokens)
        SELECT c.id, CASE WHEN n % 3 = 0 THEN 'member' ELSE 'step' END, 'text', '{{}}',
               c.created_at + (n % 30) * interval '1 second',
               CASE WHEN n % 3 = 0 THEN '' ELSE 'gpt-5-mini' END,
               CASE WHEN n % 3 = 0 THEN NULL ELSE 2000 + n % 500 END,
               CASE WHEN n % 3 = 0 THEN NULL ELSE 1000 END,
               CASE WHEN n % 3 = 0 THEN NULL ELSE 150 + n % 50 END
        FROM generate_series(1, {steps * 3 // 2}) AS n
        JOIN (SELECT id, created_at, row_number() OVER () AS k FROM agents_conversation) c
          ON c.k = 1 + n % {CONVERSATIONS}"""  # noqa: S608
    )
    cursor.execute(
        f"""INSERT INTO tools_toolcalllog
        (id, business_id, conversation_key, message_key, provider_call_id, tool_name,
         effect, arguments_raw, arguments, action_key, offered, valid, gated, status,
         verification, result, attempts, steps, again_for, created_at, expires_at,
         finished_at, duration_ms)
        SELECT gen_random_uuid(), ({g})[1 + n % {GYMS}], md5(n::text), '', 'call_' || n,
               ('{TOOLS}'::text[])[1 + n % 6], 'write', '{{"amount": 12.5}}',
               '{{"amount": 12.5}}', md5(n::text), true, true, n % 47 = 0,
               ('{STATUSES}'::text[])[1 + n % 14],
               CASE WHEN n % 7 = 0 THEN 'unverifiable' ELSE 'verified' END,
               '{{"status": "ok", "items": [1, 2, 3], "note": "a result as long as most"}}',
               1, '[{{"step": "offered"}}, {{"step": "validated"}}, {{"step": "executed"}}]',
               '', now() - (n % ({DAYS} * 1440)) * interval '1 minute',
               CASE WHEN n % 47 = 0 THEN now() ELSE NULL END, now(), 120.0
        FROM generate_series(1, {calls}) AS n"""  # noqa: S608
    )
    cursor.execute(
        """INSERT INTO approvals_decision
        (id, business_id, call_id, kind, decided_at, reason, difference)
        SELECT gen_random_uuid(), business_id, id,
               (ARRAY['approved','approved','approved','rejected','expired'])[1 + abs(hashtext(id::text)) % 5],
               created_at + interval '7 minutes', '', '{}'
        FROM tools_toolcalllog WHERE expires_at IS NOT NULL"""
    )


def _setup(calls: int, steps: int) -> Any:
    from django.db import connection

    from agents.services import agent_create
    from gymnasia.gyms.models import Business
    from tests.factories import StaffRoleFactory
    from tools.models import AgentToolSetting

    gyms = [
        Business.objects.create(name=f"Bench gym {n}", slug=f"bench-panel-{n}")
        for n in range(GYMS)
    ]
    agents = [agent_create(business=g, name="Bench") for g in gyms]
    agents[0].monthly_budget = 100
    agents[0].save()
    AgentToolSetting.objects.create(
        agent=agents[0], tool_name="refund_payment", enabled=True, mode="gated"
    )
    with connection.cursor() as cursor:
        _seed(cursor, [g.pk for g in gyms], [a.pk for a in agents], calls, steps)
        cursor.execute("VACUUM ANALYZE")
    return StaffRoleFactory(business=gyms[0], role="owner").user


def _explain(cursor: Any, queries: list[tuple[str, Any]]) -> None:
    """The plans of the Panel's four slowest queries, as PostgreSQL ran them."""
    timed = []
    for sql, params in queries:
        started = time.perf_counter()
        cursor.execute(sql, params)
        timed.append((time.perf_counter() - started, sql, params))
    for took, sql, _params in sorted(timed, key=lambda t: t[0], reverse=True):
        print(f"{took * 1000:6.1f} ms  {sql[:110]}")
    for took, sql, params in sorted(timed, key=lambda t: t[0], reverse=True)[:4]:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        print(f"-- {took * 1000:.1f} ms")
        print("\n".join(row[0] for row in cursor.fetchall()), end="\n\n")


def _fresh_database(database_url: str) -> None:
    """The benchmark's own database, made again empty at each run."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg
    from psycopg import sql

    parts = urlsplit(database_url)
    name = sql.Identifier(parts.path.lstrip("/"))
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(maintenance, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name)
        )
        connection.execute(sql.SQL("CREATE DATABASE {}").format(name))


def run(
    database_url: str, data_dir: str, calls: int, steps: int, explain: bool
) -> None:
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
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)  # as in production
    started = time.perf_counter()
    user = _setup(calls, steps)
    print(f"seeded in {time.perf_counter() - started:.0f} s")
    client = Client()
    client.force_login(user)
    headers = {"X-Forwarded-Proto": "https"}
    address = "/admin/panel/?days=30"
    client.get(address, headers=headers)  # warm-up
    queries: list[tuple[str, Any]] = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        queries.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = client.get(address, headers=headers)
    assert response.status_code == 200, response.status_code
    timings = []
    for _ in range(20):
        started = time.perf_counter()
        client.get(address, headers=headers)
        timings.append((time.perf_counter() - started) * 1000)
    print(
        f"{connection.vendor}: Panel, 30 days of 1 gym of {GYMS} ({calls:,} tool calls, "
        f"{steps:,} model steps in {DAYS} days): {len(queries)} SQL queries, "
        f"median {statistics.median(timings):.1f} ms server time"
    )
    if explain:
        with connection.cursor() as cursor:
            _explain(cursor, [q for q in queries if q[0].lstrip().startswith("SELECT")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", required=True, help="a postgres:// DATABASE_URL")
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--explain", action="store_true")
    options = parser.parse_args()
    if not options.database.startswith(("postgres://", "postgresql://")):
        parser.error("the rows are made by PostgreSQL: give a postgres:// URL")
    from tests.bench.machine import speed_line

    print(speed_line())
    _fresh_database(options.database)
    with tempfile.TemporaryDirectory() as folder:
        run(options.database, folder, options.calls, options.steps, options.explain)


if __name__ == "__main__":
    main()
