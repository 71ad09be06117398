"""The conversation page in admin: the timeline and each tool call's verification log."""

from __future__ import annotations

from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command

from agents.conversations import conversation_start
from agents.models import Agent
from agents.turn import turn_run
from gymnasia.gyms.models import Member

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    lines = dict(line.split(": ", 1) for line in out.getvalue().splitlines()[:2])
    agent = Agent.objects.get()
    member = Member.objects.get(external_id="socio-1001")
    conversation = conversation_start(agent=agent, member=member)
    async_to_sync(turn_run)(conversation, "Reserva spinning mañana")
    async_to_sync(turn_run)(conversation, "Congela mi cuota en agosto")
    return conversation, lines


@pytest.mark.parametrize("role", ["owner", "staff"])
def test_the_timeline_shows_each_tool_calls_decisions(client, seeded, role, settings):
    settings.LANGUAGE_CODE = "en"
    conversation, lines = seeded
    username, password = lines[role].split(" ")
    assert client.login(username=username, password=password)
    page = client.get(f"/admin/agents/conversation/{conversation.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Reserva spinning mañana" in html
    assert "<code>book_class</code>" in html and "verified" in html
    assert "<code>freeze_membership</code>" in html and "pending_approval" in html
    assert "He enviado tu solicitud al equipo del gimnasio" in html
    assert "offered: yes" in html.replace("</li>", "").replace("<li>", "")
