"""The conversation page in admin: the timeline and each tool call's verification log."""

from __future__ import annotations

import datetime
import re
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.http import HttpRequest
from django.test.utils import CaptureQueriesContext

from agents.conversations import conversation_start
from agents.models import Agent, Conversation, Message
from agents.turn import turn_run
from approvals.services import (
    pending_action_approve,
    pending_action_correct,
    pending_action_execute,
)
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


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _timeline(html: str) -> str:
    """The timeline's part of the page."""
    return html.split('<fieldset class="module timeline">', 1)[1].split("</fieldset>")[
        0
    ]


def _words(html: str) -> str:
    """What a reader reads of some HTML: its text, without tags."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _page(client, conversation, language: str) -> str:
    return client.get(
        f"/admin/agents/conversation/{conversation.pk}/change/",
        headers={"Accept-Language": language},
    ).content.decode()


@pytest.mark.parametrize("role", ["owner", "staff"])
def test_the_timeline_shows_each_tool_calls_decisions(client, seeded, role, settings):
    settings.LANGUAGE_CODE = "en"
    conversation, lines = seeded
    username, password = lines[role].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)
    page = client.get(f"/admin/agents/conversation/{conversation.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert re.search(r"Reserva spinning el [\d-]+ a las 19:00", html)
    assert re.search(r"Book Spinning on \w+day \d+ \w+, 19:00", html)
    assert "<span>verified</span>" in html
    assert "<strong>waiting for approval</strong>" in html
    assert "He enviado tu solicitud al equipo del gimnasio" in html


def test_the_timeline_names_who_said_each_line_in_the_readers_language(client, seeded):
    conversation, lines = seeded
    username, password = lines["staff"].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)
    url = f"/admin/agents/conversation/{conversation.pk}/change/"

    spanish = client.get(url, headers={"Accept-Language": "es"}).content.decode()
    english = client.get(url, headers={"Accept-Language": "en"}).content.decode()

    assert "<strong>Socio</strong>" in spanish
    assert "<strong>Paso del modelo</strong>" in spanish
    assert "<strong>Member</strong>" in english
    assert "<strong>Model step</strong>" in english


def test_the_timeline_says_each_calls_outcome_in_the_readers_language(client, seeded):
    """Spanish staff read a call's outcome in words, with no code even in a
    title; its steps and times are on the call's own page, linked."""
    # given a conversation with a class booked and a freeze waiting for staff
    conversation, lines = seeded
    _login(client, lines, "staff")

    # when Spanish staff open it
    page = _page(client, conversation, "es")

    # then each outcome reads in Spanish, each call links to its own page
    assert "<strong>hecho</strong> / <span>verificado</span>" in page
    assert "<strong>esperando aprobación</strong> / <span>no aplicado</span>" in page
    assert 'title="pending_approval"' not in page
    freeze = ToolCallLog.objects.get(tool_name="freeze_membership")
    assert f'<a href="/admin/tools/toolcalllog/{freeze.pk}/change/">' in page
    assert " ms" not in _words(_timeline(page))
    assert "ok / verified" not in page


def _food_and_a_repeat(conversation) -> None:
    """The member books the same class again (a duplicate of the first call) and
    adds food to a meal."""
    day = _weekday_to_come(conversation.business)
    async_to_sync(turn_run)(conversation, f"Reserva spinning el {day} a las 19:00")
    async_to_sync(turn_run)(conversation, "Añade 150 g de arroz blanco a la comida")


@pytest.mark.parametrize(
    ("language", "booked", "food", "repeat", "decided", "tool_results"),
    [
        (
            "es",
            r"Reservar Spinning el \w+ \d+ de diciembre, 19:00, con Javier Ruiz",
            "Apuntar 150 g de Arroz blanco (cocido) en la comida del",
            "repite la primera llamada",
            "aprobada por demo-staff, ",
            "Resultados de herramientas",
        ),
        (
            "en",
            r"Book Spinning on \w+day \d+ December, 19:00, with Javier Ruiz",
            "150 g of Arroz blanco (cocido)",
            "repeats the first call",
            "approved by demo-staff, ",
            "Tool results",
        ),
    ],
)
def test_each_call_reads_as_one_line_of_what_happened(
    client, seeded, language, booked, food, repeat, decided, tool_results
):
    """What was asked, with the class and the food by name; no arguments'
    JSON, no id, no heading over nothing; a repeat links to the first call; the
    step that resumed an approved request shows its call (it read «sin
    registro»)."""
    # given a booking, its repeat, food added, and a freeze approved and run
    conversation, lines = seeded
    _food_and_a_repeat(conversation)
    action = ToolCallLog.objects.get(expires_at__isnull=False)
    staff = User.objects.get(username=lines["staff"].split(" ")[0])
    pending_action_approve(action_id=action.pk, user=staff)
    assert pending_action_execute(action_id=action.pk) == "succeeded"
    _login(client, lines, "owner")

    # when the owner reads the conversation
    timeline = _timeline(_page(client, conversation, language))
    words = _words(timeline)

    # then each call is said in words, with names
    assert re.search(booked, words), words
    assert food in words
    assert not re.search(r"[{}]", words)
    assert '"session_id"' not in timeline and "food_id" not in timeline
    assert not UUID.search(words)
    assert tool_results not in words
    calls = _words("".join(re.findall(r'<div class="tool-call">.*?</div>', timeline)))
    assert not re.search(r"\d{4}-\d{2}-\d{2}", calls), calls
    # a repeat links to the first call
    first, repeat_row = ToolCallLog.objects.filter(tool_name="book_class").order_by(
        "created_at"
    )
    assert repeat_row.duplicate_of_id == first.pk
    assert (
        f'<a href="/admin/tools/toolcalllog/{first.pk}/change/" class="first-call">'
        f"{repeat}</a>"
    ) in timeline
    # the step that resumed the approved request shows its call and decision
    resumed = Message.objects.filter(
        conversation=conversation, role=Message.Role.STEP
    ).latest("pk")
    assert resumed.content["tool_calls"][0]["id"].startswith("approved_")
    line = _message_html(timeline, str(resumed.pk))
    assert f'<a href="/admin/tools/toolcalllog/{action.pk}/change/">' in line
    assert decided in line
    assert "sin registro" not in words and "no record" not in words


def test_a_call_handed_to_staff_links_its_case(client, seeded, settings):
    """A call settled by staff, or handed over by the sweep, links the case it
    opened."""
    settings.LANGUAGE_CODE = "en"
    conversation, lines = seeded
    log = ToolCallLog.objects.get(tool_name="book_class")
    owner = User.objects.get(username=lines["owner"].split(" ")[0])
    handoff = handoff_create(
        business=conversation.business,
        member=conversation.member,
        conversation_key=str(conversation.pk),
        cause="no_answer",
        tried={"tool": "book_class"},
        tool_call=log,
    )
    handoff_resolve(
        handoff_id=handoff.pk,
        business_ids=[conversation.business_id],
        user=owner,
        resolution="done",
        note="Booked at the desk.",
    )
    _login(client, lines, "owner")

    page = client.get(f"/admin/agents/conversation/{conversation.pk}/change/")

    assert page.status_code == 200
    assert (
        f'<a href="/admin/tools/handoff/{handoff.pk}/change/" class="handoff">'
        "handed to staff: the case</a>"
    ) in page.content.decode()


def _message_html(html: str, message_key: str) -> str:
    """The timeline's entry of one message, up to the next message's."""
    entry = html.split(f'id="message-{message_key}"', 1)[1]
    return entry.split('<div class="timeline-message', 1)[0]


def test_an_approved_request_keeps_its_call_under_the_step_that_asked(
    client, seeded, settings
):
    """The step that asked for a request behind approval shows that call: its
    outcome and who approved it, when."""
    settings.LANGUAGE_CODE = "en"
    conversation, lines = seeded
    action = ToolCallLog.objects.get(expires_at__isnull=False)
    staff = User.objects.get(username=lines["staff"].split(" ")[0])
    pending_action_approve(action_id=action.pk, user=staff)
    assert pending_action_execute(action_id=action.pk) == "succeeded"
    _login(client, lines, "staff")

    page = client.get(f"/admin/agents/conversation/{conversation.pk}/change/")

    step = _words(_message_html(page.content.decode(), action.message_key))
    assert re.search(
        r"Freeze the membership from 1 to 31 August( \d{4})? — done / verified · "
        r"approved by demo-staff, \w+day \d+ \w+, \d\d:\d\d",
        step,
    ), step
    assert step.count(" — ") == 1  # one call, one row


def test_a_corrected_request_says_who_corrected_it(client, seeded, settings):
    """A staff correction is a new row of the call: the request reads as
    corrected by whom, and the correction as what it asks (it read "None ms")."""
    settings.LANGUAGE_CODE = "en"
    conversation, lines = seeded
    action = ToolCallLog.objects.get(expires_at__isnull=False)
    staff = User.objects.get(username=lines["staff"].split(" ")[0])
    start, end = action.arguments["start"], action.arguments["end"]
    pending_action_correct(
        action_id=action.pk, user=staff, arguments={"start": start, "end": start}
    )
    assert end != start
    _login(client, lines, "staff")

    page = client.get(f"/admin/agents/conversation/{conversation.pk}/change/")

    words = _words(_timeline(page.content.decode()))
    assert (
        "corrected into a new request / not applied · corrected by demo-staff, "
        in words
    )
    assert re.search(r"Freeze the membership on 1 August", words), words
    assert "None" not in words


def _login(client, lines, role: str) -> None:
    username, password = lines[role].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)


def _long_conversation(messages: int) -> Conversation:
    conversation = conversation_start(agent=Agent.objects.get(), member=None)
    Message.objects.bulk_create(
        Message(conversation=conversation, role="member", text=f"m{n}")
        for n in range(1, messages + 1)
    )
    return conversation


def _texts(html: str) -> list[str]:
    return re.findall(r"<div>(m\d+)</div>", html)


def test_a_long_conversation_opens_at_its_newest_messages_a_page_at_a_time(
    client, seeded, settings
):
    settings.LANGUAGE_CODE = "en"
    _, lines = seeded
    conversation = _long_conversation(250)
    _login(client, lines, "owner")
    url = f"/admin/agents/conversation/{conversation.pk}/change/"

    newest = client.get(url).content.decode()
    oldest = client.get(f"{url}?page=3").content.decode()
    middle = client.get(f"{url}?page=2").content.decode()

    assert _texts(newest) == [f"m{n}" for n in range(151, 251)]
    assert "Messages 151–250 of 250" in newest
    assert 'href="?page=2" class="older"' in newest and 'class="newer"' not in newest
    assert _texts(middle) == [f"m{n}" for n in range(51, 151)]
    assert 'href="?page=3" class="older"' in middle
    assert 'href="?page=1" class="newer"' in middle
    assert _texts(oldest) == [f"m{n}" for n in range(1, 51)]
    assert "Messages 1–50 of 250" in oldest and 'class="older"' not in oldest
    # A page that is not one opens the newest or the last.
    assert _texts(client.get(f"{url}?page=x").content.decode()) == _texts(newest)
    assert _texts(client.get(f"{url}?page=9").content.decode()) == _texts(oldest)


def test_a_link_to_a_message_opens_the_page_that_holds_it(client, seeded):
    """As the inbox links to the step that made a request, deep in a long
    conversation."""
    _, lines = seeded
    conversation = _long_conversation(250)
    _login(client, lines, "staff")
    url = f"/admin/agents/conversation/{conversation.pk}/change/"
    for n, page in (
        (120, range(51, 151)),
        (150, range(51, 151)),
        (151, range(151, 251)),
    ):
        message = Message.objects.get(conversation=conversation, text=f"m{n}")

        html = client.get(f"{url}?at={message.pk}").content.decode()

        assert f'id="message-{message.pk}"' in html
        assert _texts(html) == [f"m{k}" for k in page]


def test_a_page_of_the_timeline_costs_the_same_queries_however_long_the_talk(
    client, seeded
):
    _, lines = seeded
    _login(client, lines, "owner")
    counts = []
    for messages in (120, 600):
        conversation = _long_conversation(messages)
        with CaptureQueriesContext(connection) as queries:
            page = client.get(f"/admin/agents/conversation/{conversation.pk}/change/")
        assert page.status_code == 200
        assert len(_texts(page.content.decode())) == 100
        counts.append(len(queries.captured_queries))

    assert counts[0] == counts[1]
