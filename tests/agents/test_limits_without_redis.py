"""Redis gone mid-way: the API still answers JSON, its limits count in the web
process's memory (logged once, said by ``/healthz``), and counting is shared
again by itself once Redis answers."""

from __future__ import annotations

import logging
import shutil
import time

import pytest

from agents import limits
from agents.models import Conversation
from tests.agents.api_client import send, start
from tests.own_redis import OwnRedis

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        shutil.which("redis-server") is None, reason="needs redis-server"
    ),
]


@pytest.fixture
def own_redis(settings):
    redis = OwnRedis()
    redis.start()
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis.url,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        },
    }
    yield redis
    redis.stop()


def test_with_redis_away_the_api_answers_and_limits_count_in_memory(
    client, agent, own_redis, monkeypatch, caplog
):
    """With Redis unreachable, the conversation API answered a 500 HTML page."""
    monkeypatch.setattr(limits, "RETRY_SHARED_SECONDS", 0.2)
    monkeypatch.setattr("agents.api.MESSAGES_PER_MINUTE", 3)
    assert start(client, agent).status_code == 201
    assert client.get("/healthz").json()["rate_limits"] == "shared"

    own_redis.stop()
    with caplog.at_level(logging.WARNING, logger="agents.limits"):
        started = start(client, agent)
        statuses = [send(client, started, f"hola {n}").status_code for n in range(4)]

    assert started.status_code == 201
    assert Conversation.objects.count() == 2
    assert statuses == [200, 200, 200, 429]  # still limited, in memory
    away = [r for r in caplog.records if "cannot be reached" in r.getMessage()]
    assert len(away) == 1  # said once, not at every request
    assert client.get("/healthz").json()["rate_limits"] == "local"

    own_redis.start()  # the same port: Redis is back
    time.sleep(0.3)
    assert start(client, agent).status_code == 201
    assert client.get("/healthz").json()["rate_limits"] == "shared"
