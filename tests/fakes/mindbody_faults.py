"""The fake Mindbody's fault modes: answers that stop a request before any
effect (500, 429, the daily limit, an expired token), an effect whose answer
is slow or lost, and connections refused.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from tests.fakes.mindbody_listener import API_PREFIX
from tests.fakes.mindbody_wire import Request, Response, error

if TYPE_CHECKING:
    from tests.fakes.mindbody_server import MindbodyFake

FAULT_MODES = frozenset(
    {
        "error_500",
        "lost_after",
        "rate_limited",
        "daily_limit",
        "slow",
        "refused",
        "token_expired",
    }
)


class Faults:
    """Mixed into :class:`MindbodyFake`, which keeps the lock and the list."""

    def fault(
        self: MindbodyFake,
        method: str,
        path: str,
        mode: str,
        *,
        times: int = 1,
        seconds: float = 0.0,
    ) -> None:
        """Make the next ``times`` requests for ``method`` ``path`` misbehave."""
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {mode!r}")
        if mode == "refused":
            self.refuse_for(seconds or 1.0)
            return
        if path.startswith(API_PREFIX):
            path = path[len(API_PREFIX) :]
        with self._lock:
            self._faults.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "mode": mode,
                    "left": times,
                    "seconds": seconds,
                }
            )

    def _take_fault(self: MindbodyFake, request: Request) -> dict[str, Any] | None:
        with self._lock:
            for fault in self._faults:
                if (
                    fault["left"] > 0
                    and fault["method"] == request.method
                    and fault["path"] == request.path
                ):
                    fault["left"] -= 1
                    return dict(fault)
        return None

    def _early_fault(
        self: MindbodyFake, fault: dict[str, Any] | None
    ) -> Response | None:
        """The answer of a fault that stops the request before any effect."""
        if fault is None:
            return None
        mode = fault["mode"]
        if mode == "error_500":
            return error(500, "InternalError", "An unexpected error occurred.")
        if mode == "rate_limited":
            response = error(429, "TooManyRequests", "Too many requests.")
            response.headers["Retry-After"] = str(int(fault["seconds"] or 1))
            return response
        if mode == "daily_limit":
            now = datetime.now(UTC)
            midnight = datetime.combine(
                now.date() + timedelta(days=1), datetime.min.time(), UTC
            )
            response = error(
                429, "DailyLimitReached", "The daily call limit has been reached."
            )
            response.headers["Retry-After"] = str(
                int((midnight - now).total_seconds()) + 1
            )
            return response
        if mode == "token_expired":
            self.expire_tokens()
            return error(401, "DeniedAccess", "The access token has expired.")
        return None
