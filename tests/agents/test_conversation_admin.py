"""The conversation page in admin: the timeline and each tool call's verification log."""

from __future__ import annotations

import datetime
import re
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.management import call_command

from agents.conversations import conversation_start
from agents.models import Agent
from agents.turn import turn_run
from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from tools.models import ToolCallLog
from tools.services import handoff_create, handoff_resolve

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    lines = dict(line.split(": ", 1) for line in out.getvalue().splitlines()[:2])
    agent = Agent.objects.get()
    member = Member.objects.get(external_id="socio-1001")
    conversation = conversation_start(agent=agent, member=member)
    day = _weekday_to_come(agent.business)
    async_to_sync(turn_run)(conversation, f"Reserva spinning el {day} a las 19:00")
    async_to_sync(turn_run)(conversation, "Congela mi cuota en agosto")
    return conversation, lines


def _weekday_to_come(business) -> datetime.date:
    """The demo's spinning runs Monday to Friday, at 07:30 and 19:00."""
    day = business_today(business=business) + datetime.timedelta(days=1)
    while day.weekday() > 4:
        day += datetime.timedelta(days=1)
    return day


@pytest.mark.parametrize("role", ["owner", "staff"])
def test_the_timeline_shows_each_tool_calls_decisions(client, seeded, role, settings):
    settings.LANGUAGE_CODE = "en"
    conversation, lines = seeded
    username, password = lines[role].split(" ")
    assert client.login(username=username, password=password)
    page = client.get(f"/admin/agents/conversation/{conversation.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert re.search(r"Reserva spinning el [\d-]+ a las 19:00", html)
    assert "<code>book_class</code>" in html and "verified" in html
    assert "<code>freeze_membership</code>" in html and "pending_approval" in html
    assert "He enviado tu solicitud al equipo del gimnasio" in html
    assert "offered: yes" in html.replace("</li>", "").replace("<li>", "")


def test_the_timeline_names_who_said_each_line_in_the_readers_language(client, seeded):
    conversation, lines = seeded
    username, password = lines["staff"].split(" ")
    assert client.login(username=username, password=password)
    url = f"/admin/agents/conversation/{conversation.pk}/change/"

    spanish = client.get(url, headers={"Accept-Language": "es"}).content.decode()
    english = client.get(url, headers={"Accept-Language": "en"}).content.decode()

    assert "<strong>Socio</strong>" in spanish
    assert "<strong>Paso del modelo</strong>" in spanish
    assert "<strong>Member</strong>" in english
    assert "<strong>Model step</strong>" in english


def test_the_timeline_shows_steps_recorded_after_the_call(client, seeded, settings):
    """A call settled by staff, or handed over by the sweep, still shows, with
    what was recorded after it."""
    settings.LANGUAGE_CODE = "en"
    conversation, lines = seeded
    log = ToolCallLog.objects.get(tool_name="book_class")
    owner = User.objects.get(username=lines["owner"].split(" ")[0])
    handoff = handoff_create(
        business=conversation.business,
        member=conversation.member,
        conversation_key=str(conversation.pk),
        reason="Could not confirm book_class.",
        tool_call=log,
    )
    handoff_resolve(
        handoff_id=handoff.pk,
        business_ids=[conversation.business_id],
        user=owner,
        resolution="done",
        note="Booked at the desk.",
    )
    username, password = lines["owner"].split(" ")
    assert client.login(username=username, password=password)

    page = client.get(f"/admin/agents/conversation/{conversation.pk}/change/")

    assert page.status_code == 200
    steps = re.findall(r"steps: (.*?)</li>", page.content.decode())
    assert any(" → settled by staff · " in line for line in steps), steps
