"""Provider-neutral types of the harness.

Provider adapters translate their SDK objects into these and back; nothing inward
of ``agents/providers`` sees an SDK type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Effect = Literal["read", "write"]
Mode = Literal["auto", "gated"]

# The ``status`` values of tool results (DESIGN.md, "Tool names").
OK = "ok"
NO_RESULTS = "no_results"
NOT_FOUND = "not_found"
INVALID_ARGUMENTS = "invalid_arguments"
UNKNOWN_TOOL = "unknown_tool"
UNAVAILABLE = "unavailable"
FAILED = "failed"
UNKNOWN_OUTCOME = "unknown_outcome"
DUPLICATE = "duplicate"
PENDING_APPROVAL = "pending_approval"

# The ``verification`` values of write results.
VERIFIED = "verified"
NOT_APPLIED = "not_applied"
UNVERIFIABLE = "unverifiable"

ERROR_STATUSES = frozenset(
    {NOT_FOUND, INVALID_ARGUMENTS, UNKNOWN_TOOL, UNAVAILABLE, FAILED, UNKNOWN_OUTCOME}
)


@dataclass(frozen=True)
class ToolSpec:
    """What a provider is told about a tool: its name, description and schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    # Each provider adapter's JSON for the spec, filled on first use: a tool's spec
    # never changes and every request of a turn carries it. Not part of its value.
    wire: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class ToolCall:
    """A call the model proposed: data, never a permission (R1)."""

    id: str
    name: str
    arguments: str | Mapping[str, Any]


@dataclass(frozen=True)
class ToolResult:
    """What goes back to the model for one call, under the call's own id (R11)."""

    call_id: str
    status: str
    payload: Mapping[str, Any]
    is_error: bool

    @property
    def verification(self) -> str | None:
        value = self.payload.get("verification")
        return str(value) if value is not None else None


@dataclass(frozen=True)
class Outcome:
    """What a handler returns: a status (``ok`` or ``no_results``), the data the
    model may read, and for writes the receipt its verifier checks."""

    status: str
    data: Mapping[str, Any] = field(default_factory=dict)
    receipt: Mapping[str, Any] = field(default_factory=dict)
