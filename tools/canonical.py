"""Canonical form of tool arguments, so that the same action has the same key (R7).

Key order and whitespace do not matter, and numbers are compared by value:
``150``, ``150.0`` and ``1.5e2`` are the same number.
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any


def _canonical_value(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float | Decimal):
        if not math.isfinite(value):
            raise ValueError("numbers must be finite")
        if value == int(value):
            return int(value)
        return float(value)
    if isinstance(value, dict):
        return {str(k): _canonical_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical_value(v) for v in value]
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def canonical_arguments(arguments: dict[str, Any]) -> str:
    """The arguments as compact JSON with sorted keys and numbers by value."""
    return json.dumps(
        _canonical_value(arguments),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def action_key(
    *,
    business_id: int,
    conversation_key: str,
    tool_name: str,
    arguments: dict[str, Any],
) -> str:
    """The hash that names one action: the business's conversation, the tool and the
    canonical arguments."""
    conversation = f"{business_id}:{conversation_key}"
    text = f"{conversation}\n{tool_name}\n{canonical_arguments(arguments)}"
    return hashlib.sha256(text.encode()).hexdigest()
