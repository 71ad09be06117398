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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from asgiref.sync import AsyncToSync, sync_to_async
from django.db import connection

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
