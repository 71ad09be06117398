"""The API's rate-limit counters: fixed one-minute windows in the shared cache
(Redis, with ``REDIS_URL``, so that every web process counts together), or in
this process's own memory while the shared cache cannot be reached.

Every count is one increment that answers the new count (Redis ``INCR`` with
its ``EXPIRE``; in memory, under the cache's lock: the embedded default serves
from one process), so a limit is kept by taking a place before any work
(``place_taken``) and never by reading a count then writing it: requests sent
together then get at most the limit's places, whatever their number.

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
from django.core.cache.backends.redis import RedisCache
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


#: How long a window's bucket lives: its minute, and a little more.
BUCKET_SECONDS = 70


def _added(counters: BaseCache, bucket: str, delta: int) -> int:
    """``delta`` added to ``bucket`` at once: its count with it."""
    if isinstance(counters, RedisCache):
        key = counters.make_and_validate_key(bucket)
        with counters._cache.get_client(key, write=True).pipeline() as pipe:
            pipe.incrby(key, delta)
            pipe.expire(key, BUCKET_SECONDS)
            added, _ = pipe.execute()
        return int(added)
    if counters.add(bucket, delta, timeout=BUCKET_SECONDS):
        return delta
    try:
        return int(counters.incr(bucket, delta))
    except ValueError:  # the bucket expired between add and incr: a new window
        counters.add(bucket, delta, timeout=BUCKET_SECONDS)
        return delta


def count(key: str) -> int:
    """One more in the current one-minute window of ``key``: the window's count
    with it."""
    bucket = _bucket(key)
    return _counted(lambda counters: _added(counters, bucket, 1))


def place_taken(key: str, limit: int) -> str | None:
    """A place in the current window of ``key``, taken at once if one of
    ``limit`` is free: the window's bucket, to give it back with
    ``place_given_back`` when the work it was for did not count; ``None`` when
    the window is full (nothing is held then)."""
    bucket = _bucket(key)
    if _counted(lambda counters: _added(counters, bucket, 1)) <= limit:
        return bucket
    place_given_back(bucket)
    return None


def place_given_back(bucket: str) -> None:
    """Give back a place ``place_taken`` took."""
    _counted(lambda counters: _added(counters, bucket, -1))


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
