"""The demo model and the days a class list covers: the day asked about, the
weekend, next week, and that day named when it has no class."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from gymnasia.classes.models import ClassSession
from gymnasia.gyms.selectors import business_today
from tests.agents.api_client import send
from tests.agents.offline_kit import (
    LATER,
    classes_on_a_later_day,
    member_conversation,
    reply_to,
)
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "asked", ["What's on {day}?", "What’s on {day}?", "¿Qué hay el {day}?"]
)
def test_what_is_on_a_day_lists_its_classes(client, agent, asked):
    """It answered with what it can do: the apostrophe stayed in the words."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, asked.format(day=day)))

    assert reply.startswith(f"Clases:\n- Yoga {day} 08:00 (Sala 1, 10 plazas libres)")
    assert f"- Pilates {day} 09:00" in reply


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        ("¿Qué clases hay hoy?", "Hoy no quedan clases."),
        ("¿Hay yoga hoy?", "Hoy no quedan clases de yoga."),
        ("¿Qué clases hay el {day}?", "No hay clases el {day}."),
        ("¿Qué clases hay esta semana?", "No hay clases en los próximos 7 días."),
    ],
)
def test_no_class_to_list_names_the_day_asked_about(client, agent, asked, answer):
    """A day with no class was told «No hay clases programadas esos días», and a
    day whose classes had all begun the same, as if none had been scheduled."""
    ClassSession.objects.all().delete()
    day = (
        timezone.localdate(timezone=agent.business.zone)
        + datetime.timedelta(days=LATER)
    ).isoformat()
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, asked.format(day=day)))

    assert reply == answer.format(day=day)


def _next(
    weekday: int, today: datetime.date, *, skip_today: bool = False
) -> datetime.date:
    ahead = (weekday - today.weekday()) % 7
    return today + datetime.timedelta(days=ahead or (7 if skip_today else 0))


@pytest.mark.parametrize(
    "asked",
    ["¿Qué clases hay este fin de semana?", "What's on at the weekend?"],
)
def test_the_weekend_is_its_saturday_and_sunday(client, agent, asked):
    """It listed the whole week."""
    today = business_today(business=agent.business)
    started = member_conversation(client, agent)

    send(client, started, asked)

    [listed] = ToolCallLog.objects.filter(tool_name="list_classes")
    saturday = _next(5, today) if today.weekday() != 6 else today
    sunday = _next(6, today)
    assert listed.arguments == {"date_from": str(saturday), "date_to": str(sunday)}


@pytest.mark.parametrize(
    "asked",
    [
        "¿Qué clases hay la semana que viene?",
        "¿Hay yoga la próxima semana?",
        "Any classes next week?",
    ],
)
def test_next_week_is_its_monday_to_sunday(client, agent, asked):
    today = business_today(business=agent.business)
    started = member_conversation(client, agent)

    send(client, started, asked)

    [listed] = ToolCallLog.objects.filter(tool_name="list_classes")
    monday = _next(0, today, skip_today=True)
    assert listed.arguments["date_from"] == str(monday)
    assert listed.arguments["date_to"] == str(monday + datetime.timedelta(days=6))


def test_and_next_week_after_a_list_asks_the_same_for_next_week(client, agent):
    """It got the list of what the assistant can do."""
    today = business_today(business=agent.business)
    started = member_conversation(client, agent)
    send(client, started, "¿Hay yoga esta semana?")

    send(client, started, "¿Y la semana que viene?")

    listed = ToolCallLog.objects.filter(tool_name="list_classes").order_by("created_at")
    monday = _next(0, today, skip_today=True)
    assert listed.last().arguments == {
        "date_from": str(monday),
        "date_to": str(monday + datetime.timedelta(days=6)),
        "class_type": "yoga",
    }
