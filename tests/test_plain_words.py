"""Where people read, they read words: no status code of a call, a request or a
check, and no tool named only by its function name, on the staff inbox and on the
admin's lists and pages of requests (decisions), calls, cases and conversations,
in Spanish and in English, as an owner and as staff.

The pages are read as their text (what a reader sees: no attribute, no script).
DESIGN's status codes of a result (``pending_approval``, ``not_applied``…) are
looked for in all of it, what is set apart as code included: the exact result
the model received is a call's download, not its page. The other codes and the
tools' names are looked for outside what is set apart as code (``<code>``,
``<pre>``): a tool's name after its title, or the arguments as the model proposed
them, are the machine's record an owner may need. A tool's name may also follow
its title in brackets, as in the choices of a tool's setting.
"""

from __future__ import annotations

import datetime
import re
from html.parser import HTMLParser
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.utils import timezone, translation

from agents.conversations import conversation_start
from agents.models import Agent
from agents.turn import turn_run
from approvals.models import Decision
from approvals.selectors import State
from approvals.services import (
    pending_action_approve,
    pending_action_correct,
    pending_action_execute,
    pending_action_reject,
    pending_actions_expire,
)
from gymnasia.gyms.models import Member, StaffRole
from gymnasia.gyms.selectors import business_today
from tools.models import AgentToolSetting, Handoff, Integration, ToolCallLog
from tools.presentation import (
    EVENT_LABELS,
    STATUS_LABELS,
    VERIFICATION_LABELS,
    tool_title,
)
from tools.registry import published_registry
from tools.services import handoff_create

pytestmark = pytest.mark.django_db

#: Every code the harness records for a call, a request or a check.
CODES = sorted(
    {*STATUS_LABELS, *VERIFICATION_LABELS, *EVENT_LABELS, *State.values} - {"ok"}
)
#: "ok" is a word people write too; as a status it is only ever all lower case
#: and alone in a cell, which the pattern below looks for.
OK_ALONE = re.compile(r"(?:^|\n)\s*ok\s*(?:$|\n)")


#: DESIGN's status codes of a tool's result and of a write's verification.
STATUS_CODES = (
    "ok",
    "no_results",
    "not_found",
    "invalid_arguments",
    "unknown_tool",
    "unavailable",
    "failed",
    "unknown_outcome",
    "duplicate",
    "pending_approval",
    "verified",
    "not_applied",
    "unverifiable",
)


class VisibleText(HTMLParser):
    """The text a reader sees, outside what is set apart as code (with
    ``code``: all of it)."""

    HIDDEN = {"code", "pre", "script", "style", "template"}

    def __init__(self, *, code: bool = False) -> None:
        super().__init__()
        self.hidden = self.HIDDEN - {"code", "pre"} if code else self.HIDDEN
        self.depth = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.hidden:
            self.depth += 1
        elif tag in {"td", "th", "li", "p", "div", "option", "br", "tr", "dd"}:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.hidden and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if not self.depth:
            self.parts.append(data)


def visible_text(html: str, *, code: bool = False) -> str:
    parser = VisibleText(code=code)
    parser.feed(html)
    return "".join(parser.parts)


def bare_tool_names(text: str) -> list[str]:
    """The tools ``text`` names by their function names alone."""
    found = []
    for tool in published_registry():
        text = text.replace(f"{tool_title(tool.name)} ({tool.name})", "")
        if re.search(rf"\b{tool.name}\b", text):
            found.append(tool.name)
    return found


def raw_words(text: str) -> list[str]:
    """The codes and the tool names standing alone that ``text`` shows."""
    found = [code for code in CODES if re.search(rf"\b{re.escape(code)}\b", text)]
    if OK_ALONE.search(text):
        found.append("ok")
    return found + bare_tool_names(text)


def status_codes_shown(html: str, language: str) -> list[str]:
    """DESIGN's status codes anywhere in the text of a page, what is set apart as
    code included: each as a word of its own ("failed" in "unfailed" is not),
    "ok" only alone in a cell or quoted as JSON writes it. In English, where
    "failed", "verified", "duplicate" and "unavailable" are words people read,
    only as no sentence writes them: with an underscore, or quoted."""
    return status_codes_in(visible_text(html, code=True), language)


def status_codes_in(text: str, language: str) -> list[str]:
    """DESIGN's status codes in ``text`` (see ``status_codes_shown``)."""
    found = []
    for code in STATUS_CODES:
        quoted = f'"{code}"' in text
        if code == "ok":
            shown = quoted or bool(OK_ALONE.search(text))
        elif language == "en" and "_" not in code:
            shown = quoted
        else:
            shown = bool(re.search(rf"\b{code}\b", text))
        if shown:
            found.append(code)
    return found


def test_the_status_scan_reads_code_too_and_english_words_as_words():
    page = (
        "<p>Reservar una clase <code>book_class</code></p>"
        '<pre><code>{"status": "pending_approval", "verification": "not_applied"}'
        "</code></pre><p>La llamada falló (failed)</p>"
    )
    english = '<p>Looked again: verified. It failed.</p><pre>{"status": "ok"}</pre>'

    assert status_codes_shown(page, "es") == [
        "failed",
        "pending_approval",
        "not_applied",
    ]
    assert status_codes_shown(english, "en") == ["ok"]
    assert status_codes_shown("<p>Looked again: verified.</p>", "en") == []
    assert status_codes_shown("<p>verified</p>", "es") == ["verified"]


def test_the_scan_finds_codes_and_bare_tool_names():
    """The scan can fail: it sees what it looks for, and not what it allows."""
    page = (
        "<table><tr><td>pending_approval</td><td>ok</td></tr></table>"
        "<p>Reservar <code>cancel_booking</code></p>"
        "<select><option>Reservar una clase (book_class)</option></select>"
    )
    bare = page + "<p>Cancelar: cancel_booking</p>"

    with translation.override("es"):
        assert raw_words(visible_text(page)) == ["pending_approval", "ok"]
        assert raw_words(visible_text(bare)) == [
            "pending_approval",
            "ok",
            "cancel_booking",
        ]


def _weekday_to_come(business) -> datetime.date:
    """The demo's spinning runs Monday to Friday, at 07:30 and 19:00."""
    day = business_today(business=business) + datetime.timedelta(days=1)
    while day.weekday() > 4:
        day += datetime.timedelta(days=1)
    return day


@pytest.fixture
def gym_day():
    """The demo gym after a day of work: a read, a booking, a refusal, a person
    asked for, and four requests (one asked for twice): one rejected, one
    corrected (its correction waits), one approved and done, one expired; then,
    with booking behind approval, a booking that waits for staff."""
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    member = Member.objects.get(external_id="socio-1001")
    conversation = conversation_start(agent=agent, member=member)
    day = _weekday_to_come(agent.business)
    for text in (
        "¿Cuántos carbohidratos tiene el arroz blanco?",
        f"Reserva spinning el {day} a las 19:00",
        "Apúntame 0 g de arroz blanco en la comida",
        "Congela mi cuota del 1 al 10 de agosto",
        "Congela mi cuota del 1 al 10 de agosto",
        "Congela mi cuota del 1 al 10 de septiembre",
        "Congela mi cuota del 1 al 10 de octubre",
        "Congela mi cuota del 1 al 10 de noviembre",
        "Quiero hablar con una persona",
    ):
        async_to_sync(turn_run)(conversation, text)
    staff = StaffRole.objects.get(business=agent.business, role="staff").user
    rejected, corrected, approved, expiring = ToolCallLog.objects.filter(
        status="pending_approval"
    ).order_by("created_at")
    pending_action_reject(action_id=rejected.pk, user=staff, reason="Ya no")
    end = datetime.date.fromisoformat(corrected.arguments["end"])
    pending_action_correct(
        action_id=corrected.pk,
        user=staff,
        arguments={**corrected.arguments, "end": str(end - datetime.timedelta(days=2))},
    )
    pending_action_approve(action_id=approved.pk, user=staff)
    pending_action_execute(action_id=approved.pk)
    # Only the fourth expires: the corrected one waits as long as its original.
    ToolCallLog.objects.filter(pk=expiring.pk).update(
        expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    assert pending_actions_expire() == 1
    booked = ToolCallLog.objects.get(tool_name="book_class", status="ok")
    handoff_create(  # a write nobody could confirm
        business=agent.business,
        member=member,
        conversation_key=str(conversation.pk),
        cause=Handoff.Cause.NO_ANSWER,
        tried={"tool": "book_class", "arguments": booked.arguments},
        tool_call=booked,
    )
    AgentToolSetting.objects.filter(agent=agent, tool_name="book_class").update(
        mode=AgentToolSetting.Mode.APPROVAL
    )
    async_to_sync(turn_run)(conversation, f"Reserva spinning el {day} a las 07:30")
    assert ToolCallLog.objects.get(tool_name="book_class", status="pending_approval")
    statuses = set(ToolCallLog.objects.values_list("status", flat=True))
    assert {"ok", "duplicate", "invalid_arguments", "pending_approval"} <= statuses
    assert {"rejected", "superseded", "expired"} <= statuses
    assert Handoff.objects.exists()
    return agent, conversation


def _pages(agent, conversation) -> list[str]:
    pages = [f"/inbox/?status={state}" for state in State.values]
    pages += ["/inbox/?status=", "/inbox/handoffs/"]
    pages += [
        "/admin/tools/toolcalllog/",
        "/admin/approvals/decision/",
        "/admin/agents/conversation/",
        "/admin/tools/handoff/",
        f"/admin/agents/conversation/{conversation.pk}/change/",
    ]
    pages += [f"/admin/tools/toolcalllog/{pk}/change/" for pk in _ids(ToolCallLog)]
    pages += [f"/admin/approvals/decision/{pk}/change/" for pk in _ids(Decision)]
    pages += [f"/admin/tools/handoff/{pk}/change/" for pk in _ids(Handoff)]
    return pages


def _ids(model) -> list:
    return list(model.objects.values_list("pk", flat=True))


@pytest.mark.parametrize("language", ["es", "en"])
@pytest.mark.parametrize("role", ["owner", "staff"])
def test_requests_calls_and_conversations_read_in_words(
    client, gym_day, role, language
):
    """Every list and page of calls, requests, conversations and cases, and the
    inbox: no status code anywhere in their text, no tool by its name alone; in
    Spanish, no other code either (in English "rejected" or "expired" are the
    words themselves)."""
    agent, conversation = gym_day
    user = StaffRole.objects.get(business=agent.business, role=role).user
    client.force_login(user)
    pages = _pages(agent, conversation)
    if role == "owner":
        pages.append(f"/admin/agents/agent/{agent.pk}/change/")

    found = {}
    for url in pages:
        response = client.get(url, headers={"Accept-Language": language})
        assert response.status_code == 200, url
        assert response["Content-Language"] == language
        html = response.content.decode()
        text = visible_text(html)
        words = status_codes_shown(html, language)
        words += raw_words(text) if language == "es" else bare_tool_names(text)
        if words:
            found[url] = words

    assert len(pages) > 20
    assert found == {}


def test_the_decision_page_says_what_a_correction_changed(client, gym_day):
    agent, _ = gym_day
    owner = StaffRole.objects.get(business=agent.business, role="owner").user
    client.force_login(owner)
    decision = Decision.objects.get(kind="superseded")

    page = client.get(
        f"/admin/approvals/decision/{decision.pk}/change/",
        headers={"Accept-Language": "es"},
    ).content.decode()

    assert "corregida en una nueva solicitud" in page
    assert re.search(r"fin: 10 de (\w+)(?: de \d{4})? → 8 de \1", page)
    assert re.search(r"Congelar la cuota del 1 al 10 de \w+", page)


def test_a_calls_page_in_english_names_the_tool_and_its_outcome(client, gym_day):
    agent, _ = gym_day
    owner = StaffRole.objects.get(business=agent.business, role="owner").user
    client.force_login(owner)
    booked = ToolCallLog.objects.filter(tool_name="book_class", status="ok").first()

    page = client.get(
        f"/admin/tools/toolcalllog/{booked.pk}/change/",
        headers={"Accept-Language": "en"},
    ).content.decode()

    text = visible_text(page)
    assert "Book a class" in text and "done" in text and "verified" in text
    assert "<code>book_class</code>" in page


def test_admin_messages_read_right_for_a_feminine_name(client):
    """Django's Spanish says «El integración»; the project's words fit any name."""
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    owner = StaffRole.objects.get(business=agent.business, role="owner").user
    client.force_login(owner)
    integration = Integration.objects.get(business=agent.business, kind="classes")

    response = client.post(
        f"/admin/tools/integration/{integration.pk}/change/",
        {"business": agent.business.pk, "kind": "classes", "status": "connected"},
        headers={"Accept-Language": "es"},
        follow=True,
    )

    text = visible_text(response.content.decode())
    assert "Se han guardado los cambios de «" in text
    assert "(integración)" in text
    assert "El integración" not in text


def test_a_cases_page_says_what_was_asked_as_a_sentence(client, gym_day):
    agent, _ = gym_day
    owner = StaffRole.objects.get(business=agent.business, role="owner").user
    client.force_login(owner)
    handoff = Handoff.objects.get(tried__tool="book_class")

    page = client.get(
        f"/admin/tools/handoff/{handoff.pk}/change/",
        headers={"Accept-Language": "es"},
    ).content.decode()

    assert re.search(r"Reservar Spinning el \w+ \d+ de \w+.*, 19:00, con ", page)
