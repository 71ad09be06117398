"""The member widget's pages: the one-tag loader, the chat panel a gym's site frames,
and the demo gym's own site (embedded default only)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
)
from django.shortcuts import get_object_or_404, render
from django.utils.formats import number_format
from django.utils.translation import gettext, override
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_safe

from agents.demo import demo_agent, demo_identity_token
from agents.embedding import agent_origins, widget_frame_policy
from agents.models import Agent
from agents.schemas import MAX_TEXT
from agents.services import provider_missing_key
from agents.verdict import CASES, SENTENCES
from gymnasia.gyms.models import Member
from gymnasia.text import text_storable

LOADER = Path(__file__).resolve().parent / "static" / "agents" / "widget.js"
POLL_SECONDS = 3


@cache
def _loader_source() -> bytes:
    return LOADER.read_bytes()


@require_safe
def widget_script(request: HttpRequest) -> HttpResponse:
    """``/widget.js``: the script a gym adds to its pages with one tag."""
    source = LOADER.read_bytes() if settings.DEBUG else _loader_source()
    response = HttpResponse(source, content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=300"
    return response


def answers_offline(agent: Agent) -> bool:
    """Whether the offline demo model answers for this agent (no provider key)."""
    return agent.provider == Agent.Provider.OFFLINE or bool(
        provider_missing_key(agent.provider)
    )


def _panel_strings(agent: Agent, language: str) -> dict[str, str]:
    """The panel's words in ``language``."""
    with override(language):
        return {
            "open": gettext("Open the chat"),
            "conversation": gettext("Conversation"),
            "offline": gettext(
                "Demo mode: an offline demo model answers, not an AI provider."
            ),
            "close": gettext("Close the chat"),
            "send": gettext("Send"),
            "placeholder": gettext("Write your message"),
            "greeting": gettext("Hello, I am %(name)s. How can I help you?")
            % {"name": agent.name},
            "typing": gettext("The assistant is writing…"),
            "older_messages": gettext("Show earlier messages"),
            "working": gettext("The assistant is checking…"),
            "you": gettext("You"),
            "assistant": gettext("Assistant"),
            "notice": gettext("Notice"),
            # The launcher's count in words (the panel fills in "%(count)s"); the
            # panel's languages, Spanish and English, say one apart from the rest.
            "unread_one": gettext("1 new message"),
            "unread_other": gettext("%(count)s new messages"),
            "identity_refused": gettext(
                "We could not confirm who you are. Sign in again on the gym's website "
                "and reload the page."
            ),
            "expired": gettext(
                "This conversation has expired. Send your message again to start a new one."
            ),
            "expired_conversation": gettext(
                "Your earlier conversation has expired; what you write now starts a new "
                "one."
            ),
            "rate_limited": gettext(
                "You are sending messages too quickly. Please wait a minute."
            ),
            "too_long": gettext(
                "Your message is too long (at most %(limit)s characters)."
            )
            % {"limit": number_format(MAX_TEXT, force_grouping=True)},
            "not_found": gettext("This assistant is not available on this site."),
            "failed": gettext(
                "The message could not be sent. Check your connection and try again."
            ),
            "unfinished": gettext(
                "The assistant could not finish its reply. Please try again."
            ),
            "connection_lost": gettext(
                "The connection was interrupted; the reply will appear here when it is ready."
            ),
        }


@xframe_options_exempt
@require_safe
def widget_page(request: HttpRequest, public_key: str) -> HttpResponse:
    """The chat panel, served in an iframe that only the agent's sites may frame."""
    if not text_storable(public_key):  # a NUL character names no agent
        raise Http404
    agent = get_object_or_404(Agent, public_key=public_key)
    with override(agent.language):
        config: dict[str, Any] = {
            "agent": agent.public_key,
            "name": agent.name,
            "api": "/api/v1",
            "origins": agent_origins(agent),
            "max_length": MAX_TEXT,
            "poll_seconds": POLL_SECONDS,
            "sentences": {
                case: [SENTENCES[language][case] for language in SENTENCES]
                for case in CASES
            },
            # The panel speaks the conversation's language: the agent's until the
            # API names another (the member's), so it has the words of each.
            "language": agent.language,
            "strings": {
                code: _panel_strings(agent, code) for code, _ in settings.LANGUAGES
            },
        }
        response = render(
            request,
            "agents/widget.html",
            {
                "agent": agent,
                "config": config,
                "offline": answers_offline(agent),
                "language": agent.language,
            },
        )
    response["Content-Security-Policy"] = widget_frame_policy(agent)
    response["Cache-Control"] = "no-store"
    return response


DEMO_SITE_HOST = "localhost"
DEMO_APP_HOST = "127.0.0.1"


@require_safe
def demo_site(request: HttpRequest) -> HttpResponse:
    """The demo gym's own website, with the widget on it (embedded default only).

    It is served as ``localhost`` and loads the widget from ``127.0.0.1``: two
    origins, as a gym's site and Gymnasia are. ``?member=<id>`` plays the gym's
    back end signing in a demo member; ``?member=<id>&expired=1`` shows a refused
    (expired) identity token.
    """
    if not settings.DEMO_SITE:
        raise Http404
    host, _, port = request.get_host().rpartition(":")
    if not host:
        host, port = port, ""
    suffix = f":{port}" if port else ""
    if host != DEMO_SITE_HOST:
        query = f"?{request.GET.urlencode()}" if request.GET else ""
        return HttpResponseRedirect(
            f"{request.scheme}://{DEMO_SITE_HOST}{suffix}{request.path}{query}"
        )
    agent = demo_agent()
    if agent is None:
        raise Http404
    members = list(
        Member.objects.filter(business_id=agent.business_id).order_by("external_id")
    )
    member = next(
        (m for m in members if m.external_id == request.GET.get("member")), None
    )
    token = None
    if member is not None:
        token = demo_identity_token(
            agent=agent, member=member, expired=request.GET.get("expired") == "1"
        )
    with override(agent.language):
        return render(
            request,
            "agents/demo_site.html",
            {
                "agent": agent,
                "business": agent.business,
                "members": members,
                "member": member,
                "identity_token": token,
                "widget_origin": f"{request.scheme}://{DEMO_APP_HOST}{suffix}",
            },
        )
