"""Starts sent together from one address, against a real server (uvicorn, in
this process) on PostgreSQL and Redis: at most the limit's conversations are
started, and at most the limit's refused starts are worked on, however many
arrive at once. The count was read before and written after the start, so 300
starts sent together all got 201 against a limit of 90."""

from __future__ import annotations

import json
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator

import pytest

from agents import limits
from agents.api import CONVERSATIONS_PER_MINUTE, STARTS_REFUSED_PER_MINUTE
from agents.models import Agent, Conversation
from tests.live_uvicorn import uvicorn_running
from tests.own_redis import OwnRedis

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        shutil.which("redis-server") is None, reason="needs redis-server"
    ),
]
STARTS = 300


@pytest.fixture
def server(settings) -> Iterator[str]:
    """The app under uvicorn, its limits counted in a Redis of its own."""
    redis = OwnRedis()
    redis.start()
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis.url,
        },
    }
    try:
        with uvicorn_running(backlog=STARTS * 2) as base:
            yield base
    finally:
        redis.stop()


def starts_together(base: str, agent_key: str) -> Counter[int]:
    """``STARTS`` starts from one address, released at once by a barrier: how
    many got each status."""
    barrier = threading.Barrier(STARTS)
    statuses: list[int] = []
    body = json.dumps({"agent": agent_key}).encode()

    def start() -> None:
        request = urllib.request.Request(
            f"{base}/api/v1/conversations",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        barrier.wait()
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                statuses.append(response.status)
        except urllib.error.HTTPError as refused:
            statuses.append(refused.code)

    threads = [threading.Thread(target=start) for _ in range(STARTS)]
    if limits.seconds_left() < 20:  # all of them in one minute's window
        time.sleep(limits.seconds_left() + 1)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert len(statuses) == STARTS
    return Counter(statuses)


def test_starts_sent_together_get_at_most_the_limit(server, agent):
    statuses = starts_together(server, agent.public_key)

    assert statuses[201] == CONVERSATIONS_PER_MINUTE
    assert statuses[429] == STARTS - CONVERSATIONS_PER_MINUTE
    assert Conversation.objects.count() == CONVERSATIONS_PER_MINUTE


def test_refused_starts_sent_together_are_worked_on_at_most_to_their_limit(
    server, agent
):
    statuses = starts_together(server, "ag_nobody")

    assert 0 < statuses[404] <= STARTS_REFUSED_PER_MINUTE
    assert statuses[404] + statuses[429] == STARTS
    assert Conversation.objects.count() == 0
    assert Agent.objects.count() == 1
