"""Members and staff read one date format, as people write dates in their
language: the chat's replies, a rejection notice, the inbox's rows; no ISO day
and no «Dec. 7» (the tools' ISO stays the model's data)."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.management import call_command
from django.http import HttpRequest

from agents.conversations import conversation_start
from agents.models import Agent, Message
from agents.turn import turn_run
from approvals.services import pending_action_reject
from gymnasia.gyms.models import Member
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db

ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
ABBREVIATED = re.compile(r"\b[A-Za-z]{3,4}\. \d")

ASKED = {
    "es": ("¿Qué clases hay mañana?", "Congela mi cuota del 1 al 10 de agosto"),
    "en": (
        "What classes are there tomorrow?",
        "Freeze my membership from 1 to 10 August",
    ),
}
WRITTEN = {
    "es": ("Spinning ", r"Spinning \w+ \d+ de \w+, 07:30", "del 1 al 10 de agosto"),
    "en": ("Spinning ", r"Spinning \w+day \d+ \w+, 07:30", "from 1 to 10 August"),
}


@pytest.fixture
def seeded():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return dict(line.split(": ", 1) for line in out.getvalue().splitlines()[:2])


def _said(conversation) -> list[str]:
    return [
        m.text
        for m in conversation.messages.order_by("pk")
        if m.role in (Message.Role.ASSISTANT, Message.Role.NOTICE)
    ]


def _one_format(texts: list[str]) -> None:
    for text in texts:
        assert not ISO_DAY.search(text), text
        assert not ABBREVIATED.search(text), text


@pytest.mark.parametrize(
    ("language", "sub"), [("es", "socio-1001"), ("en", "socio-1003")]
)
def test_a_member_reads_dates_as_written_in_chat_and_notices(seeded, language, sub):
    # given a member who lists tomorrow's classes and asks for a freeze
    member = Member.objects.get(external_id=sub)
    assert member.language == language
    conversation = conversation_start(agent=Agent.objects.get(), member=member)
    classes, freeze = ASKED[language]
    async_to_sync(turn_run)(conversation, classes)
    async_to_sync(turn_run)(conversation, freeze)

    # when staff reject the freeze
    staff = User.objects.get(username=seeded["staff"].split(" ")[0])
    action = ToolCallLog.objects.get(expires_at__isnull=False)
    pending_action_reject(action_id=action.pk, user=staff, reason="Obras")

    # then the classes, the freeze and the rejection say their dates in words
    said = _said(conversation)
    _, listed, days = WRITTEN[language]
    assert re.search(listed, said[0]), said
    assert days in said[1], said
    assert days in said[-1] and "Obras" in said[-1], said
    _one_format(said)


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_inbox_rows_say_when_in_words(client, seeded, language):
    member = Member.objects.get(external_id="socio-1001")
    conversation = conversation_start(agent=Agent.objects.get(), member=member)
    async_to_sync(turn_run)(conversation, ASKED["es"][1])
    username, password = seeded["staff"].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)

    page = client.get("/inbox/", headers={"Accept-Language": language}).content.decode()

    row = page.split('<span class="when">', 1)[1].split("</span>", 1)[0]
    assert re.fullmatch(r"\w+ \d+ (de )?\w+, \d\d:\d\d", row), row
    words = re.sub(r"<[^>]+>", " ", page.split("<main", 1)[-1])
    _one_format([words])
