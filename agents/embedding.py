"""Who may embed an agent's widget and call its API from a browser.

An owner lists the sites of the gym, one origin per line, on the agent. Those origins,
and no other, may frame the widget page (CSP ``frame-ancestors``) and read the API's
answers from their own pages (CORS, ``agents.cors``). Every other page of Gymnasia denies framing.
"""

from __future__ import annotations

import re

from django.http import HttpRequest

from agents.models import Agent

#: scheme://host[:port], nothing else: anything looser could smuggle a directive
#: into the CSP header.
ORIGIN = re.compile(
    r"^https?://(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*"
    r"|\[[0-9a-f:.]+\])(?::\d{1,5})?$"
)


def origin_normalized(value: str) -> str | None:
    """The origin in the form browsers send it, or ``None`` when it is not one."""
    candidate = value.strip().rstrip("/").lower()
    return candidate if ORIGIN.match(candidate) else None


def agent_origins(agent: Agent) -> list[str]:
    """The agent's allowed origins that are well formed (others are ignored)."""
    found = (origin_normalized(line) for line in agent.origins())
    return [origin for origin in found if origin]


def origin_allowed(agent: Agent, origin: str | None) -> bool:
    return bool(origin) and origin_normalized(origin or "") in agent_origins(agent)


def widget_frame_policy(agent: Agent) -> str:
    """The CSP of the widget page: its own scripts and API only, framed by the
    agent's origins (none listed: framed by nobody)."""
    ancestors = " ".join(agent_origins(agent)) or "'none'"
    return "; ".join(
        [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "connect-src 'self'",
            "img-src 'self' data:",
            "base-uri 'none'",
            "form-action 'none'",
            f"frame-ancestors {ancestors}",
        ]
    )


def request_origin(request: HttpRequest) -> str | None:
    """The browser's ``Origin``, unless it is this site's own (no CORS needed)."""
    origin = request.headers.get("Origin")
    if not origin or origin == "null":
        return None
    own = f"{request.scheme}://{request.get_host()}"
    return None if origin.lower() == own.lower() else origin
