"""Typed errors of integration clients.

They say what is known about an effect, which is what the retry policy (R6) and the
handoff rule (R9) need: nothing was done, or something may have been done.
"""

from __future__ import annotations


class IntegrationError(Exception):
    """Base class. Messages never carry credentials."""


class IntegrationUnavailable(IntegrationError):
    """The integration could not be reached or is not connected; nothing was done."""


class NotDelivered(IntegrationError):
    """The request provably never arrived (e.g. connection refused); nothing was done."""


class IntegrationFailed(IntegrationError):
    """The integration answered with a failure and did nothing (e.g. rolled back)."""


class OutcomeUnknown(IntegrationError):
    """The request was sent and no answer came back: it may or may not have acted."""
