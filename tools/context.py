"""What one tool call runs with: who calls, what the turn offers, and where its
integration clients come from; and the trace of its steps.

The clients are the call's seam to the outside world: ``CallContext.clients``
gives a handler the client of the integration its tool needs. By default it is
the factory the ``TOOLS_CLIENTS`` setting names (``tools.integrations.client_for``);
a test names, or passes, one whose clients misbehave on purpose, and nothing in
the call's path knows the difference.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from gymnasia.gyms.models import Business, Member
from tools.models import ToolCallLog
from tools.registry import ToolRegistry, published_registry
from tools.selection import ToolPolicy

ClientFactory = Callable[[str, Business], Any]


def configured_clients() -> ClientFactory:
    """The client factory the ``TOOLS_CLIENTS`` setting names."""
    factory: ClientFactory = import_string(settings.TOOLS_CLIENTS)
    return factory


@dataclass(frozen=True)
class CallContext:
    """Who is calling and what this turn offers; fixed for the turn (R2)."""

    business: Business
    member: Member | None
    conversation_key: str
    offered: Mapping[str, ToolPolicy]
    message_key: str = ""
    #: The member's message whose turn proposed the call (``again``: R7).
    turn_key: str = ""
    registry: ToolRegistry = field(default_factory=published_registry)
    #: The integrations' clients of this call (``kind, business → client``).
    clients: ClientFactory = field(default_factory=configured_clients)
    #: When given, the log row of a call that never acted (a read, or a call refused
    #: before it ran) is put here instead of written, for the caller to write with
    #: the rest of its turn's step in one transaction. A write's row is always
    #: stored as it is claimed, before it runs.
    unstored_logs: list[ToolCallLog] | None = None


class Trace:
    """The steps of one call, with milliseconds since the call arrived."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.steps: list[dict[str, Any]] = []

    def step(self, name: str, **details: Any) -> None:
        elapsed = round((time.perf_counter() - self.started) * 1000, 3)
        self.steps.append({"step": name, "ms": elapsed, **details})

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)
