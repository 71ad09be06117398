"""What the flow tests of the offline demo model share: a conversation through
the API, what the member reads after each message, and the calls it made."""

from __future__ import annotations

import datetime

from django.utils import translation

from gymnasia.gyms.selectors import business_today
from gymnasia.when import when_written
from tests.agents.api_client import identity, send, start
from tools.models import ToolCallLog


def member_conversation(client, agent, sub: str = "socio-1001"):
    return start(client, agent, identity_token=identity(agent, sub=sub))


def reply_to(response) -> str:
    return response.json()["messages"][-1]["text"]


def talk(client, started, *texts: str) -> list[str]:
    """The reply to each message, in order."""
    return [reply_to(send(client, started, text)) for text in texts]


def calls() -> list[tuple[str, dict]]:
    """The tool calls made so far, oldest first, with their arguments."""
    logged = ToolCallLog.objects.order_by("created_at", "pk")
    return [(call.tool_name, call.arguments) for call in logged]


def weekday_ahead(agent, days: int = 1) -> datetime.date:
    """The first weekday at least ``days`` from the gym's today: the demo's
    spinning runs Monday to Friday, at 07:30 and 19:00."""
    day = business_today(business=agent.business) + datetime.timedelta(days=days)
    while day.weekday() > 4:
        day += datetime.timedelta(days=1)
    return day


def _date(day) -> datetime.date:
    return day if isinstance(day, datetime.date) else datetime.date.fromisoformat(day)


def at(day, hour: str, language: str = "es") -> str:
    """A class's start as the member reads it: «martes 8 de diciembre, 07:30»."""
    with translation.override(language):
        return f"{when_written(_date(day), weekday=True)}, {hour}"


def on(day, language: str = "es") -> str:
    """A day as the member reads it: «8 de diciembre»."""
    with translation.override(language):
        return when_written(_date(day))


def between(start, end, language: str = "es") -> str:
    """Days as the member reads them: «del 1 al 10 de agosto de 2027»."""
    with translation.override(language):
        return when_written(_date(start), _date(end))
