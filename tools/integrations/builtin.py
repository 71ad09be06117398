"""The base of the built-in integrations, which reach the gym's own database.

Writes run in their own transaction under a statement timeout, and their failures
are classified: an error inside the transaction means it was rolled back
(``IntegrationFailed``); an error while committing means nobody knows
(``OutcomeUnknown``).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import TypeVar

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from gymnasia.gyms.models import Business
from tools.integrations.errors import (
    IntegrationFailed,
    IntegrationUnavailable,
    OutcomeUnknown,
)

T = TypeVar("T")


class _RolledBack(Exception):
    pass


def number(value: Decimal) -> float | int:
    """A decimal as a JSON number, without a trailing ``.0`` for whole numbers."""
    return int(value) if value == value.to_integral_value() else float(value)


def _apply_statement_timeout() -> None:
    if connection.vendor == "postgresql":
        milliseconds = int(settings.TOOLS_EXECUTION_TIMEOUT * 1000)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('statement_timeout', %s, true)", [str(milliseconds)]
            )


class BuiltinClient:
    """A client of one built-in integration kind for one business."""

    kind = ""
    #: The methods that change data; the fault seam applies write faults to these.
    writes: frozenset[str] = frozenset()

    def __init__(self, business: Business) -> None:
        self.business = business

    def _read(self, operation: Callable[[], T]) -> T:
        try:
            return operation()
        except DatabaseError as error:
            raise IntegrationUnavailable(
                "the gym's database could not be read"
            ) from error

    def _write(self, operation: Callable[[], T]) -> T:
        try:
            with transaction.atomic():
                try:
                    _apply_statement_timeout()
                    return operation()
                except DatabaseError as error:
                    raise _RolledBack from error
        except _RolledBack as error:
            raise IntegrationFailed(
                "the gym's database refused the change; it was rolled back"
            ) from error.__cause__
        except DatabaseError as error:
            raise OutcomeUnknown(
                "the change was sent but its commit could not be confirmed"
            ) from error
