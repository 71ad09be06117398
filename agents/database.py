"""Database work of async code, run in a thread and let go of at once.

A turn waits seconds for the model. Under ASGI each request's database work runs in a
thread of its own that keeps its connection until the request ends; ``db_call`` gives
a pooled PostgreSQL connection back after each piece of work, so a turn waiting for
its provider holds none. (SQLite connections cost nothing to hold and are kept.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.db import connection

P = ParamSpec("P")
T = TypeVar("T")


def release_connection() -> None:
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        connection.close()


async def db_call(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    def work() -> T:
        try:
            return function(*args, **kwargs)
        finally:
            release_connection()

    return await sync_to_async(work)()
