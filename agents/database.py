"""Database work of async code, in a thread, through Django's ``sync_to_async``.

A turn waits seconds for the model. Its database work runs in a pool of four
threads (``thread_sensitive=False``: turns do not queue behind one thread), and a
pooled PostgreSQL connection is given back after each piece of work, so a turn
waiting for its provider holds none (SQLite connections cost nothing to hold and
are kept). Those threads serve no request of their own, so Django's start of a
request never resets their query log: with ``DEBUG`` on, each piece of work
resets it itself, or a running server would keep thousands of queries a thread.

Four threads, not the event loop's default pool (six on two cores): with four,
``tests/bench/bench_turns.py`` (200 concurrent turns, PostgreSQL) takes
2.40-2.57 s, against 2.45-2.90 s with six.

Code driven from a sync thread through ``async_to_sync`` (Django's test client, a
Celery task) keeps its database work on that thread (``thread_sensitive=True``): it
holds the connection, and with it any transaction in progress.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple, ParamSpec, TypeVar

from asgiref.sync import AsyncToSync, sync_to_async
from django.db import connection, connections, reset_queries
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Model
from psycopg import sql

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
    """``function(*args, **kwargs)``, run as the module's docstring says."""
    if _under_a_sync_thread():
        return await sync_to_async(_released(function))(*args, **kwargs)
    return await sync_to_async(
        _released(function, own_thread=True), thread_sensitive=False, executor=_threads
    )(*args, **kwargs)


def _released(function: Callable[P, T], own_thread: bool = False) -> Callable[P, T]:
    """``function``, giving its connection back to the pool when it is done (and
    on a thread of no request's, forgetting the queries it logged)."""

    def work(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return function(*args, **kwargs)
        finally:
            release_connection()
            if own_thread:
                reset_queries()

    return work


def rows_insert_linked(
    parents: Sequence[Model],
    children: Sequence[Model] = (),
    link: str = "",
    parent_of: Sequence[Model] = (),
    *,
    serialized_by: str,
) -> None:
    """Insert new ``parents`` (rows of one table, which the database gives their
    keys) and ``children`` (rows of another) in one statement, which PostgreSQL
    applies whole or not at all: one round trip. (In
    ``tests/bench/bench_tool_calls.py``, the ORM's way, the lock's statement and
    two ``bulk_create`` in a transaction, costs a call's rows 0.37-0.39 ms against
    0.17-0.19 ms, and puts a one-call turn's calls at 0.45-0.50 of the best
    reference harness's cost, at the edge of the half it must stay under.) Each child's field ``link`` is
    set to the key of its row in ``parent_of``, one of ``parents`` or a row
    already stored. The parents get their keys in their order (the order the
    database inserts them in, as Django's own bulk insert takes for granted).

    Before any key is taken, the statement takes the advisory lock of
    ``serialized_by``, held until its transaction ends: parents inserted under
    one such key are committed in the order of their keys, so a reader asking
    for the rows after a key never passes over one committed late.

    The statement's text depends on the tables only, so the server prepares it
    once per connection, and its values go as arrays in binary form."""
    position = {id(parent): n for n, parent in enumerate(parents, start=1)}
    plan = _linked_insert(
        type(parents[0]), type(children[0]) if children else None, link
    )
    # The thread's connection itself, not the proxy that finds it at each use.
    database = connections[connection.alias]
    params: list[Any] = [serialized_by]
    params += [_column(parents, f, database) for f in plan.parent_fields]
    if plan.link_field is not None:
        for child, parent in zip(children, parent_of, strict=True):
            # A new parent's key is filled in by the statement, in place of NULL.
            new = id(parent) in position
            setattr(child, link, None if new else plan.link_field.to_python(parent.pk))
        params += [_column(children, f, database) for f in plan.child_fields]
        params.append([position.get(id(parent)) for parent in parent_of])
    with connection.cursor() as cursor:
        cursor.execute(plan.sql, params)
        keys = [key for (key,) in cursor.fetchall()]
    for row, key in zip(parents, keys, strict=True):
        row.pk = key
    if plan.link_field is not None:
        for child, parent in zip(children, parent_of, strict=True):
            setattr(child, link, plan.link_field.to_python(parent.pk))
    for row in (*parents, *children):
        row._state.adding = False
        row._state.db = connection.alias


def _inserted(model: type[Model]) -> list[Field[Any, Any]]:
    """The columns an insert of the model's rows gives values for (not a key the
    database makes, nor a generated column)."""
    return [
        f
        for f in model._meta.local_concrete_fields
        if not f.generated and not (f.primary_key and f.db_returning)
    ]


def _column(
    rows: Sequence[Model], field: Field[Any, Any], database: BaseDatabaseWrapper
) -> list[Any]:
    """One column's values, prepared for the database as Django's insert does."""
    return [
        field.get_db_prep_save(field.pre_save(row, True), connection=database)
        for row in rows
    ]


class LinkedInsert(NamedTuple):
    """The statement of ``rows_insert_linked`` for two tables, and the columns
    its arrays are given in."""

    parent_fields: list[Field[Any, Any]]
    child_fields: list[Field[Any, Any]]
    #: The child's field naming its parent; ``None`` with no child table.
    link_field: Field[Any, Any] | None
    sql: str


@functools.cache
def _linked_insert(
    parent: type[Model], child: type[Model] | None, link: str
) -> LinkedInsert:
    """Built once per process for each pair of tables."""
    key = sql.Identifier(str(parent._meta.pk.column))
    columns = _inserted(parent)
    statement = sql.SQL(
        # The lock is taken once, before the join gives the insert its first row
        # (and with it the first key).
        "WITH serial AS MATERIALIZED "
        "(SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))), "
        "parent AS (INSERT INTO {table} ({columns}) "
        "SELECT new.* FROM serial CROSS JOIN UNNEST({arrays}) AS new "
        "RETURNING {key})"
    ).format(
        table=sql.Identifier(parent._meta.db_table),
        columns=_names(columns),
        arrays=_arrays(columns),
        key=key,
    )
    if child is None:
        statement += sql.SQL(" SELECT {key} FROM parent ORDER BY {key}").format(key=key)
        return LinkedInsert(columns, [], None, statement.as_string())
    link_field: Field[Any, Any] = child._meta.get_field(link)  # type: ignore[assignment]
    child_fields = _inserted(child)
    if child._meta.pk not in child_fields:
        raise ValueError("the child rows' keys must be made before they are inserted")
    names = [sql.Identifier(f"c{n}") for n in range(len(child_fields))]
    values = [
        sql.SQL("COALESCE(v.{name}, CAST(keys.ids[v.parent] AS {type}))").format(
            name=name, type=_type(link_field)
        )
        if field is link_field
        else sql.SQL("v.{name}").format(name=name)
        for name, field in zip(names, child_fields, strict=True)
    ]
    statement += sql.SQL(
        ", keys AS (SELECT array_agg({key} ORDER BY {key}) AS ids FROM parent), "
        "child AS (INSERT INTO {table} ({columns}) "
        "SELECT {values} FROM keys, UNNEST({arrays}, %b::integer[]) "
        "AS v({names}, parent)) "
        "SELECT {key} FROM parent ORDER BY {key}"
    ).format(
        key=key,
        table=sql.Identifier(child._meta.db_table),
        columns=_names(child_fields),
        values=sql.SQL(", ").join(values),
        arrays=_arrays(child_fields),
        names=sql.SQL(", ").join(names),
    )
    return LinkedInsert(columns, child_fields, link_field, statement.as_string())


def _names(fields: list[Field[Any, Any]]) -> sql.Composable:
    return sql.SQL(", ").join([sql.Identifier(str(f.column)) for f in fields])


def _arrays(fields: list[Field[Any, Any]]) -> sql.Composable:
    """A placeholder per column for its values as an array, in binary form."""
    return sql.SQL(", ").join([sql.SQL("%b::{}[]").format(_type(f)) for f in fields])


def _type(field: Field[Any, Any]) -> sql.Composable:
    return sql.SQL(field.db_type(connection) or "")
