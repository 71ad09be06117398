"""Typed errors of the gym domain.

Domain services raise these so that callers (admin, tool handlers, views) can tell
apart an object that does not exist for this business or member, a value that a
business rule refuses, and a request that conflicts with the current state.

Besides its message (in the active language, English for a model), an error
carries a stable ``code`` and its ``params`` (plain JSON values): a refusal a
member reads is written from those in her own words (``gymnasia.refusals``),
never translated back from the message.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """A business rule refused the operation; nothing was changed."""

    code = "error"

    def __init__(
        self,
        message: Any,
        *,
        field: str | None = None,
        code: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(str(message))
        self.message = str(message)
        self.field = field
        if code is not None:
            self.code = code
        self.params = dict(params or {})

    def __str__(self) -> str:
        return self.message

    def refusal(self) -> dict[str, Any]:
        """The refusal as data a tool result carries: code, field and params."""
        return {"code": self.code, "field": self.field, "params": self.params}


class NotFound(DomainError):
    """The object does not exist, or belongs to another business or member."""

    code = "not_found"


class InvalidValue(DomainError):
    """A value is refused by a business rule (negative grams, a past class)."""

    code = "invalid"


class Conflict(DomainError):
    """The request conflicts with the current state (a full class, an overlap)."""

    code = "conflict"


class NotAllowed(DomainError):
    """The person may not do this now (an account deactivated, a role removed)."""

    code = "not_allowed"
