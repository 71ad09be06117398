"""Database work of async code, run in a thread and let go of at once.

A turn waits seconds for the model. Its database work runs in a small pool of
threads shared by every request of the process, each thread keeping its own
connection: a new thread and connection per request cost a turn more CPU than its
queries did, and a turn that outlives its request (a streaming client went away)
must still be able to store its reply. ``db_call`` gives a pooled PostgreSQL
connection back after each piece of work, so a turn waiting for its provider holds
none. (SQLite connections cost nothing to hold and are kept.)

Code driven from a sync thread through ``async_to_sync`` (Django's test client, a
Celery task) keeps its database work on that thread: it holds the connection, and
with it any transaction in progress.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from asgiref.sync import AsyncToSync, sync_to_async
from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import Model
from django.db.models.sql import InsertQuery

P = ParamSpec("P")
T = TypeVar("T")

DATABASE_THREADS = 4
_threads = ThreadPoolExecutor(
    max_workers=DATABASE_THREADS, thread_name_prefix="database"
)


def release_connection() -> None:
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        connection.close()


def _under_a_sync_thread() -> bool:
    """Whether a sync thread waits on this coroutine through ``async_to_sync``
    (asgiref records that thread's executor; it is what its own
    ``thread_sensitive`` calls are routed to)."""
    return getattr(AsyncToSync.executors, "current", None) is not None


async def db_call(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    def work() -> T:
        try:
            return function(*args, **kwargs)
        finally:
            release_connection()

    if _under_a_sync_thread():
        return await sync_to_async(work)()
    # What ``sync_to_async(thread_sensitive=False)`` does for us (the caller's
    # context, the active language included, in the thread), without the rest of
    # its machinery: about half the cost of a hand-off, and a tool call makes one.
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(_threads, context.run, work)


def sent_together() -> bool:
    """Whether statements can reach the database in one round trip and run there
    as one transaction: PostgreSQL with client-side binding (Django's default)
    sends a query's parameters inside its text, by the simple protocol, where the
    server runs the statements of one query in a transaction of their own."""
    if connection.vendor != "postgresql":
        return False
    from psycopg import ClientCursor

    connection.ensure_connection()
    return issubclass(connection.connection.cursor_factory, ClientCursor)


def keys_take(rows: Sequence[Model]) -> None:
    """Give new rows of one table their primary keys from its sequence, in one
    query, before they are written (``sent_together`` must hold): rows can then
    point at each other when they are inserted together."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(%s::regclass) FROM generate_series(1, %s) ORDER BY 1",
            [_sequence(cursor, type(rows[0])), len(rows)],
        )
        for row, (key,) in zip(rows, cursor.fetchall(), strict=True):
            row.pk = key


def rows_insert_together(*groups: Sequence[Model]) -> None:
    """Insert new rows, each group of one table and with its keys, in one query
    (``sent_together`` must hold), which the server applies whole or not at all."""
    groups = tuple(group for group in groups if group)
    statements, params = [], []
    for group in groups:
        model = type(group[0])
        query = InsertQuery(model)
        fields = [f for f in model._meta.concrete_fields if not f.generated]
        query.insert_values(fields, list(group))
        [(sql, values)] = query.get_compiler(connection=connection).as_sql()
        statements.append(sql)
        params.extend(values)
    with connection.cursor() as cursor:
        cursor.execute(";\n".join(statements), params)
    for group in groups:
        for row in group:
            row._state.adding = False
            row._state.db = connection.alias


_sequences: dict[str, str] = {}


def _sequence(cursor: CursorWrapper, model: type[Model]) -> str:
    """The sequence of the model's primary key (looked up once per process)."""
    table = model._meta.db_table
    if table not in _sequences:
        cursor.execute(
            "SELECT pg_get_serial_sequence(%s, %s)", [table, model._meta.pk.column]
        )
        _sequences[table] = cursor.fetchone()[0]
    return _sequences[table]
