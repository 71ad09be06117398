"""Which source serves each kind of a business: the built-in domain, or the gym's
own software (a ``mindbody`` integration whose ``config["serves"]`` names the kind).

One source per kind per gym. A vendor the owner disconnected leaves its kinds to the
built-in domain; a failing one keeps them (its tools are not offered, R3, and
nothing runs on the built-in domain with the vendor's ids meanwhile).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tools.integrations.mindbody import SERVED_TOOLS

BUILT_IN = "built_in"
MINDBODY = "mindbody"
VENDORS = (MINDBODY,)


def vendor_serving(kind: str | None, rows: Mapping[str, tuple[str, Any]]) -> str | None:
    """The vendor serving ``kind``, given the business's integrations as
    ``kind → (status, config)``; ``None`` for the built-in domain."""
    if not kind:
        return None
    for vendor in VENDORS:
        status, config = rows.get(vendor, ("", {}))
        if status in ("connected", "failing") and kind in (config or {}).get(
            "serves", []
        ):
            return vendor
    return None


def tool_source(
    name: str, kind: str | None, rows: Mapping[str, tuple[str, Any]]
) -> str:
    """The source a tool acts on: a vendor where it serves the tool's kind and
    the tool, else the built-in domain."""
    vendor = vendor_serving(kind, rows)
    if vendor == MINDBODY and kind and name in SERVED_TOOLS.get(kind, frozenset()):
        return MINDBODY
    return BUILT_IN


def integration_rows(integrations: Iterable[Any]) -> dict[str, tuple[str, Any]]:
    return {row.kind: (row.status, row.config) for row in integrations}
