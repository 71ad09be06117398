"""The staff user token Mindbody's API is used with.

Issued with the staff user's name and password (``POST /usertoken/issue``), kept in
the cache until shortly before it expires, and reused by every call of the gym
meanwhile: Mindbody bills calls beyond a daily quota. A token Mindbody no longer
accepts is forgotten, and the next call issues another.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
from typing import TYPE_CHECKING, Any

from django.core.cache import cache
from django.utils import timezone
from django.utils.dateparse import parse_datetime

if TYPE_CHECKING:
    from tools.integrations.mindbody.client import MindbodyClient

ISSUE_PATH = "/usertoken/issue"
#: How long a token is kept when Mindbody does not say when it expires.
DEFAULT_LIFETIME_SECONDS = 3600
#: A token is not used in its last minute.
MARGIN_SECONDS = 60


def cached(key: str) -> Any:
    """A cached value, or ``None`` when the cache (Redis) cannot be read: a
    token is then issued again, never a call failed for it."""
    try:
        return cache.get(key)
    except Exception:  # any cache backend's failure
        return None


def cache_put(key: str, value: Any, timeout: int) -> None:
    with contextlib.suppress(Exception):
        cache.set(key, value, timeout=timeout)


def cache_drop(key: str) -> None:
    with contextlib.suppress(Exception):
        cache.delete(key)


def _key(client: MindbodyClient) -> str:
    connection = client.connection
    address = hashlib.sha256(connection.base_url.encode()).hexdigest()[:12]
    # Per address too: a token one address issued is never sent to another.
    return (
        f"mindbody:{connection.integration_id}:{connection.fingerprint}:{address}:token"
    )


def user_token(client: MindbodyClient) -> str:
    """The ``Authorization`` header's value: the cached token, or a new one."""
    found = cached(_key(client))
    if found:
        return str(found)
    return _issue(client)


def forget(client: MindbodyClient) -> None:
    cache_drop(_key(client))


def _issue(client: MindbodyClient) -> str:
    connection = client.connection
    issued = client.send(
        "POST",
        ISSUE_PATH,
        body={"Username": connection.username, "Password": connection.password},
        authorized=False,
    )
    access = issued.get("AccessToken")
    if not isinstance(access, str) or not access:
        from tools.integrations.mindbody.client import STAFF_REFUSED

        client.refused(STAFF_REFUSED)
    # The document: "pass the token in the headers", as issued (no scheme).
    cache_put(_key(client), access, timeout=_lifetime(issued.get("Expires")))
    return str(access)


def _lifetime(expires: object) -> int:
    """Seconds to keep a token that expires at ``expires`` (Mindbody's UTC time)."""
    moment = parse_datetime(expires) if isinstance(expires, str) else None
    if moment is None:
        return DEFAULT_LIFETIME_SECONDS
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, datetime.UTC)
    left = (moment - timezone.now()).total_seconds() - MARGIN_SECONDS
    return max(int(left), 1)
