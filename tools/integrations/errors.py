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


class CredentialsRefused(IntegrationUnavailable):
    """The vendor refused the gym's credentials (a key, a site, a staff user):
    nothing was done, and the integration is not healthy until tested again."""


class RateLimited(NotDelivered):
    """The vendor refused the request for its rate or daily limit; it was not
    processed. ``retry_after`` is in seconds, when the vendor said."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class FailedForMember(IntegrationFailed):
    """The integration refused the request for a reason the member can act on
    (no pass that pays for a class): nothing was done. ``code`` and ``params``
    are a refusal a member is told from (``gymnasia.refusals``)."""

    def __init__(
        self, message: str, *, code: str, params: dict[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.params = dict(params or {})

    def refusal(self) -> dict[str, object]:
        return {"code": self.code, "field": None, "params": self.params}
