"""Integrations that misbehave on purpose, through the call's client seam.

A tool call gets its integrations' clients from its ``CallContext.clients``,
by default the factory the ``TOOLS_CLIENTS`` setting names (``tools.context``).
``inject_fault(kind, fault)`` points that setting, in this process, at
``faulty_clients`` until the block ends: every built-in client of that kind then
misbehaves (at most ``times`` calls spoiled). A test in another process (a turn
run by ``python -c``) enters the same block there. Production code knows
nothing of it.

- ``UNAVAILABLE``: the call fails before reaching the integration;
- ``READS_UNAVAILABLE``: the same, for reads only (writes pass, looking again fails);
- ``NOT_DELIVERED``: the call provably never arrived;
- ``STORAGE_FAILURE``: the write reaches the database, which refuses it (a real
  database error inside the write's transaction, so it rolls back);
- ``TIMEOUT_AFTER_COMMIT``: the write is done and committed, then the answer is lost;
- ``NOT_APPLIED``: the write answers as if done, but its change is silently undone;
- ``SLOW_WRITE``: the write's transaction stalls in the database for
  ``SLOW_WRITE_SECONDS`` before its change (PostgreSQL: ``pg_sleep``), so the
  execution timeout stops it.

``UNAVAILABLE`` and ``NOT_DELIVERED`` apply to every method; the write faults only to
the client's ``writes``.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.test import override_settings

from gymnasia.gyms.models import Business
from tools.integrations import client_for
from tools.integrations.builtin import BuiltinClient
from tools.integrations.errors import (
    IntegrationUnavailable,
    NotDelivered,
    OutcomeUnknown,
)


class Fault(enum.Enum):
    UNAVAILABLE = "unavailable"
    READS_UNAVAILABLE = "reads_unavailable"
    NOT_DELIVERED = "not_delivered"
    STORAGE_FAILURE = "storage_failure"
    TIMEOUT_AFTER_COMMIT = "timeout_after_commit"
    NOT_APPLIED = "not_applied"
    SLOW_WRITE = "slow_write"


WRITE_FAULTS = {
    Fault.STORAGE_FAILURE,
    Fault.TIMEOUT_AFTER_COMMIT,
    Fault.NOT_APPLIED,
    Fault.SLOW_WRITE,
}
SLOW_WRITE_SECONDS = 2.0


@dataclass
class _Rule:
    kind: str
    fault: Fault
    times: int | None
    spoiled: int = 0


_rules: list[_Rule] = []
_lock = threading.Lock()


@contextmanager
def inject_fault(
    kind: str, fault: Fault, *, times: int | None = None
) -> Iterator[_Rule]:
    """Make clients of ``kind`` misbehave inside the block (``times`` calls at most)."""
    rule = _Rule(kind=kind, fault=fault, times=times)
    with _lock:
        _rules.append(rule)
    try:
        with override_settings(TOOLS_CLIENTS=f"{__name__}.faulty_clients"):
            yield rule
    finally:
        with _lock:
            _rules.remove(rule)


def faulty_clients(kind: str, business: Business) -> Any:
    """The clients of ``client_for``, the built-in ones spoiled as the rules say."""
    client = client_for(kind, business)
    return FaultyClient(client) if isinstance(client, BuiltinClient) else client


def _take(kind: str, is_write: bool) -> Fault | None:
    with _lock:
        for rule in _rules:
            if rule.kind != kind or (rule.fault in WRITE_FAULTS and not is_write):
                continue
            if rule.fault is Fault.READS_UNAVAILABLE and is_write:
                continue
            if rule.times is not None and rule.spoiled >= rule.times:
                continue
            rule.spoiled += 1
            return rule.fault
    return None


def _refused_by_storage() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM gymnasia_table_that_does_not_exist")


class FaultyClient:
    """Wraps a client and spoils its calls as the active rules say."""

    def __init__(self, client: BuiltinClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if name.startswith("_") or not callable(attribute):
            return attribute
        is_write = name in self._client.writes

        def call(*args: Any, **kwargs: Any) -> Any:
            if is_write and self._client.rehearsing:
                # A write rolled back (a check before approval) changes nothing:
                # the faults are kept for the write itself.
                return attribute(*args, **kwargs)
            fault = _take(self._client.kind, is_write)
            return _spoil(fault, self._client, attribute, args, kwargs)

        return call


def _spoil(
    fault: Fault | None,
    client: BuiltinClient,
    method: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    if fault is None:
        return method(*args, **kwargs)
    if fault in (Fault.UNAVAILABLE, Fault.READS_UNAVAILABLE):
        raise IntegrationUnavailable(f"{client.kind} is unavailable (injected)")
    if fault is Fault.NOT_DELIVERED:
        raise NotDelivered(f"{client.kind} refused the connection (injected)")
    if fault is Fault.STORAGE_FAILURE:
        return client._write(_refused_by_storage)
    if fault is Fault.SLOW_WRITE:

        def stall_then_write() -> Any:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(%s)", [SLOW_WRITE_SECONDS])
            return method(*args, **kwargs)

        return client._write(stall_then_write)
    if fault is Fault.TIMEOUT_AFTER_COMMIT:
        method(*args, **kwargs)
        raise OutcomeUnknown(
            f"{client.kind} timed out after the change was sent (injected)"
        )
    with transaction.atomic():
        result = method(*args, **kwargs)
        transaction.set_rollback(True)
    return result
