"""The API's rate-limit counters: fixed one-minute windows in the shared cache
(Redis, with ``REDIS_URL``, so that every web process counts together), or in
this process's own memory while the shared cache cannot be reached.

A limiter that failed with Redis answered every API request with a server error
page. While Redis is away each process counts alone (the limits hold per process,
so together they allow a few times more), it is logged once, ``/healthz`` says
``"rate_limits": "local"``, and the shared cache is tried again every few seconds:
once it answers, counting is shared again by itself.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import BaseCache, caches
from redis.exceptions import RedisError

log = logging.getLogger(__name__)
T = TypeVar("T")

#: While the shared cache is away, how long before it is tried again.
RETRY_SHARED_SECONDS = 5.0

_lock = threading.Lock()
_away_until: float | None = None  # monotonic time; None: the shared cache answers


def _counted(operation: Callable[[BaseCache], T]) -> T:
    """``operation`` on the shared cache, or on this process's memory while the
    shared one is away."""
    global _away_until
    away = _away_until
    if away is None or time.monotonic() >= away:
        try:
            result = operation(caches["default"])
        except (RedisError, OSError):
            with _lock:
                if _away_until is None:
                    log.warning(
                        "rate limits: the shared cache cannot be reached; counting "
                        "in this process until it answers again"
                    )
                _away_until = time.monotonic() + RETRY_SHARED_SECONDS
        else:
            if away is not None:
                with _lock:
                    _away_until = None
                log.warning("rate limits: the shared cache answers again")
            return result
    return operation(caches["local"])


def counting_shared() -> bool:
    """Whether the counters are the shared cache's (else this process's)."""
    return _away_until is None


def _bucket(key: str) -> str:
    return f"rate:{key}:{int(time.time() // 60)}"


def count(key: str) -> int:
    """One more in the current one-minute window of ``key``: the window's count
    with it."""
    bucket = _bucket(key)

    def add_one(counters: BaseCache) -> int:
        if counters.add(bucket, 1, timeout=70):
            return 1
        try:
            return int(counters.incr(bucket))
        except ValueError:  # the bucket expired between add and incr: a new window
            counters.add(bucket, 1, timeout=70)
            return 1

    return _counted(add_one)


def allowed(key: str, limit: int) -> bool:
    """Counts one more for ``key``: whether it is within ``limit``."""
    return count(key) <= limit


def counts(*keys: str) -> list[int]:
    """The current window's count of each of ``keys``."""
    buckets = [_bucket(key) for key in keys]
    found = _counted(lambda counters: counters.get_many(buckets))
    return [int(found.get(bucket, 0)) for bucket in buckets]


#: Requests for a person an anonymous visitor may make in a minute, from one
#: address and to one agent: each opens a case for staff.
HANDOFFS_PER_ADDRESS = 5
HANDOFFS_PER_AGENT = 30


def anonymous_handoffs_allowed(*, agent_id: object, address: str) -> bool:
    """Whether an anonymous visitor at ``address`` may ask ``agent_id``'s gym
    for a person now: fewer than the limits this minute."""
    from_address, to_agent = counts(f"handoff:{address}", f"handoff-agent:{agent_id}")
    return from_address < HANDOFFS_PER_ADDRESS and to_agent < HANDOFFS_PER_AGENT


def anonymous_handoff_counted(*, agent_id: object, address: str) -> None:
    count(f"handoff:{address}")
    count(f"handoff-agent:{agent_id}")


def seconds_left() -> int:
    """Seconds until the current window ends (what ``Retry-After`` says)."""
    return 60 - int(time.time()) % 60
