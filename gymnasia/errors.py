"""Typed errors of the gym domain.

Domain services raise these so that callers (admin, tool handlers, views) can tell
apart an object that does not exist for this business or member, a value that a
business rule refuses, and a request that conflicts with the current state.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """A business rule refused the operation; nothing was changed."""

    code = "error"

    def __init__(self, message: Any, *, field: str | None = None) -> None:
        super().__init__(str(message))
        self.message = str(message)
        self.field = field

    def __str__(self) -> str:
        return self.message


class NotFound(DomainError):
    """The object does not exist, or belongs to another business or member."""

    code = "not_found"


class InvalidValue(DomainError):
    """A value is refused by a business rule (negative grams, a past class)."""

    code = "invalid"


class Conflict(DomainError):
    """The request conflicts with the current state (a full class, an overlap)."""

    code = "conflict"
