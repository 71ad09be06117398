"""Django's ASGI handler, without a thread of its own for Meta's webhook.

Django serves each request inside asgiref's ``ThreadSensitiveContext``: the
first piece of sync work the request hands to a thread (the ``request_started``
signal's receivers, before any middleware) starts a thread for that request
alone, and the request's end stops it. That keeps one request's sync code and
its transaction on one thread while other requests run on theirs.

The WhatsApp webhook's view is async and does its database work in
``agents.database``'s pool of threads; on that per-request thread only
Django's own signals' receivers run (closing connections the thread never
opened). Starting and stopping it was a third to a half of an
acknowledgement's time: 200 deliveries through this application in-process,
eight at a time, PostgreSQL and Redis on a loaded 2-core machine, took
13.6-15.6 ms and 8.1-8.8 ms of CPU each with it, 7.4-8.4 ms and 5.8-6.8 ms
without. The paths below skip the context: their thread-sensitive work runs
on asgiref's one shared thread (as in Django before contexts), the signals'
receivers of one request after another's, which take microseconds. Every
other path is served as Django serves it.
"""

from __future__ import annotations

from typing import Any

import django
from django.core.handlers.asgi import ASGIHandler

#: Paths (after the script prefix) whose views are async and do their database
#: work through ``agents.database.db_call``.
SHARED_THREAD_PATHS = ("/channels/whatsapp/",)


class Handler(ASGIHandler):
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and _shares_the_thread(scope):
            await self.handle(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


def _shares_the_thread(scope: dict[str, Any]) -> bool:
    path = str(scope.get("path", ""))
    path = path.removeprefix(str(scope.get("root_path", "")))
    return path.startswith(SHARED_THREAD_PATHS)


def application_get() -> Handler:
    """As ``django.core.asgi.get_asgi_application``, with the handler above."""
    django.setup(set_prefix=False)
    return Handler()
