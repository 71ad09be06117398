"""The base of the built-in integrations, which reach the gym's own database.

Writes run in their own transaction under a statement timeout, and their failures
are classified: an error inside the transaction means it was rolled back
(``IntegrationFailed``); an error while committing means nobody knows
(``OutcomeUnknown``). Within ``rolled_back()``, a write runs with every check of
the gym's code and is then rolled back: that is how a request is checked before
staff are asked to approve it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
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
        self._rehearsing = False

    @property
    def rehearsing(self) -> bool:
        """Whether writes are being rolled back (``rolled_back``)."""
        return self._rehearsing

    @contextlib.contextmanager
    def rolled_back(self) -> Iterator[None]:
        """Writes made within run, with all their checks, and change nothing."""
        self._rehearsing = True
        try:
            yield
        finally:
            self._rehearsing = False

    def _read(self, operation: Callable[[], T]) -> T:
        try:
            return operation()
        except DatabaseError as error:
            raise IntegrationUnavailable(
                "the gym's database could not be read"
            ) from error

    def _write(self, operation: Callable[[], T]) -> T:
        if self._rehearsing:
            return self._rehearse(operation)
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

    def _rehearse(self, operation: Callable[[], T]) -> T:
        with transaction.atomic():
            result = self._read(operation)
            transaction.set_rollback(True)
        return result
