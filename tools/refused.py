"""Arguments refused before any effect (R4), as a result carries them: the
precise English reason the model reads (``errors``) and, beside it, the
refusal's code, field and parameters (``refusals``), from which a member is told
in her own words (``gymnasia.refusals``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError

#: A schema keyword and the code of its refusal; the keyword's value is the
#: refusal's parameter named beside it (None: no parameter).
SCHEMA_CODES: dict[str, tuple[str, str | None]] = {
    "exclusiveMinimum": ("more_than", "limit"),
    "minimum": ("at_least", "limit"),
    "exclusiveMaximum": ("less_than", "limit"),
    "maximum": ("at_most", "limit"),
    "enum": ("not_one_of", "choices"),
    "maxLength": ("too_long", "max"),
    "type": ("wrong_type", "expected"),
}


@dataclass(frozen=True)
class Refused:
    """One reason why arguments were refused: the model's words and the data."""

    reason: str
    code: str = "unreadable"
    field: str | None = None
    params: dict[str, Any] = dataclasses.field(default_factory=dict)

    def as_data(self) -> dict[str, Any]:
        return {"code": self.code, "field": self.field, "params": self.params}


def refused_payload(refused: Iterable[Refused]) -> dict[str, Any]:
    """An ``invalid_arguments`` result's payload: the reasons and the refusals."""
    refused = list(refused)
    return {
        "errors": [r.reason for r in refused],
        "refusals": [r.as_data() for r in refused],
    }


def schema_refused(error: ValidationError) -> Refused:
    """A schema's refusal of one value, with the code its keyword stands for
    ("grams: 0 is less than or equal to the minimum of 0" is ``more_than`` 0)."""
    path = [str(p) for p in error.absolute_path]
    reason = f"{'/'.join(path) or 'arguments'}: {error.message}"
    keyword = str(error.validator)
    where = path[-1] if path else None
    if keyword == "required":
        missing = [n for n in error.validator_value if n not in (error.instance or {})]
        return Refused(reason, "missing", missing[0] if missing else None)
    if keyword == "format" and error.validator_value == "date":
        return Refused(reason, "not_a_date", where)
    if keyword == "minLength" and error.validator_value == 1:
        return Refused(reason, "empty", where)
    if keyword == "additionalProperties":
        return Refused(reason, "unreadable", where)
    code, name = SCHEMA_CODES.get(keyword, ("invalid", None))
    params = {name: error.validator_value} if name else {}
    return Refused(reason, code, where, params)
