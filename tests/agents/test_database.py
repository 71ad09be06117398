"""``db_call``: the database work of async code, in a thread of the shared pool."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from django.db import connection
from django.utils import translation

from agents.database import db_call

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_work_runs_in_a_database_thread_in_the_callers_language():
    async def main() -> tuple[str, str]:
        with translation.override("es"):
            return await db_call(
                lambda: (threading.current_thread().name, translation.get_language())
            )

    thread, language = asyncio.run(main())

    assert thread.startswith("database")
    assert language == "es"


def test_an_error_of_the_work_reaches_the_caller():
    def broken() -> None:
        raise LookupError("no such row")

    with pytest.raises(LookupError, match="no such row"):
        asyncio.run(db_call(broken))


def test_a_caller_that_stops_waiting_leaves_the_work_to_finish_quietly():
    """The thread's answer to a cancelled caller is dropped, not an error."""
    started, go_on = threading.Event(), threading.Event()
    errors: list[dict] = []

    def slow() -> str:
        started.set()
        go_on.wait(5)
        return "done"

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, error: errors.append(error)
        )
        waiting = asyncio.ensure_future(db_call(slow))
        await asyncio.to_thread(started.wait, 5)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        go_on.set()
        await asyncio.sleep(0.2)  # the thread answers meanwhile

    asyncio.run(main())

    assert errors == []


@pytest.mark.postgres
def test_on_postgresql_the_connection_goes_back_to_the_pool_after_the_work():
    """A turn waiting for its model holds no connection."""

    def in_use() -> int:
        stats = connection.pool.get_stats()
        return stats["pool_size"] - stats["pool_available"]

    def work() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM agents_message")
        return in_use()

    connection.ensure_connection()
    before = in_use()

    held = asyncio.run(db_call(work))

    assert held == before + 1
    deadline = time.monotonic() + 2
    while in_use() != before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert in_use() == before


def test_with_debug_on_the_database_threads_keep_no_query_log(settings):
    """Django empties a request's query log when the next request starts, on the
    request's own thread; the database threads serve none, so their work empties
    it (with ``DEBUG`` on, as ``make run`` runs, it grew with every turn)."""
    settings.DEBUG = True

    def work() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return len(connection.queries_log)

    async def main() -> list[int]:
        return [await db_call(work) for _ in range(40)]

    logged = asyncio.run(main())

    assert logged == [1] * 40  # each piece of work sees its own query alone
