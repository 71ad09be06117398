"""CORS for the conversation API, through ``django-cors-headers``.

Only an agent's own allowed origins (``agents.embedding``) may read the API's answers
from a browser on their pages. ``django-cors-headers`` answers preflights and writes
the headers on the paths of ``CORS_URLS_REGEX`` (settings); which origin may read an
answer is not fixed in settings, so it is asked of ``origin_allowed_for_request``
through the library's ``check_request_enabled`` signal, its hook for dynamic origins:

- a conversation's messages: the conversation's agent decides (whoever asks, so a
  client on the gym's site can read why its token was refused);
- starting a conversation: the agent the body names, once the view has found it
  (``cors_agent_set``); an answer that names no agent (a preflight, a bad body, an
  unknown agent, a rate limit) may be read by an origin that any agent lists.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable
from typing import Any, cast

from corsheaders import middleware
from corsheaders.signals import check_request_enabled
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponseBase

from agents.database import db_call
from agents.embedding import origin_allowed, origin_normalized, request_origin
from agents.models import Agent, Conversation

#: The API's paths (``CORS_URLS_REGEX`` in settings names the same ones).
API_PATH = re.compile(
    r"^/api/v1/conversations(?:/(?P<conversation_id>[^/]+)/messages)?$"
)
_AGENT = "_cors_agent"


def cors_agent_set(request: HttpRequest, agent: Agent) -> None:
    """Records the agent a view found for this request: its origins decide."""
    setattr(request, _AGENT, agent)


def _origin_listed(origin: str) -> bool:
    """Whether any agent lists this origin (for answers that name no agent)."""
    normalized = origin_normalized(origin)
    if normalized is None:
        return False
    candidates = Agent.objects.filter(allowed_origins__icontains=normalized)
    return any(origin_allowed(agent, origin) for agent in candidates)


def _conversation_agent(conversation_id: str) -> Agent | None:
    """The agent of a conversation id, whoever asks (for CORS only)."""
    try:
        uuid.UUID(conversation_id)
    except ValueError:
        return None
    conversation = (
        Conversation.objects.select_related("agent").filter(pk=conversation_id).first()
    )
    return conversation.agent if conversation else None


@receiver(check_request_enabled)
def origin_allowed_for_request(
    sender: Any, request: HttpRequest, **kwargs: Any
) -> bool:
    """Whether the request's ``Origin`` may read the answer: one of the allowed
    origins of the agent the request addresses. This site's own pages need no
    CORS, and no path but the API's gets it. May read the database."""
    found = API_PATH.match(request.path_info)
    origin = request_origin(request)
    if found is None or origin is None:
        return False
    agent: Agent | None = getattr(request, _AGENT, None)
    if agent is None and found["conversation_id"]:
        agent = _conversation_agent(found["conversation_id"])
    if agent is not None:
        return origin_allowed(agent, origin)
    return _origin_listed(origin)


class CorsMiddleware(middleware.CorsMiddleware):
    """``django-cors-headers``' middleware, with two differences. A preflight is
    answered ``204 No Content``, as the API answers any ``OPTIONS``. Under ASGI,
    the headers of a cross-site request to the API are decided in a database
    thread (``agents.database``), since the signal's receiver reads agents; every
    other request stays on the event loop, as the library runs it."""

    def check_preflight(self, request: HttpRequest) -> HttpResponseBase | None:
        response = super().check_preflight(request)
        if response is not None:
            response.status_code = 204
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        if "Origin" not in request.headers or not API_PATH.match(request.path_info):
            return await super().__acall__(request)
        # On the API's paths ``is_enabled`` matches CORS_URLS_REGEX without the
        # signal, so the preflight check stays on the loop.
        response = self.check_preflight(request)
        if response is None:
            response = await cast(
                Awaitable[HttpResponseBase], self.get_response(request)
            )
        return await db_call(self.add_response_headers, request, response)
