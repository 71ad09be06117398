"""The demo model and a freeze: a length asked from which day, the days said
back and asked of staff on her yes; impossible or reversed days told as such
while the question stays; the direct form; a repeat."""

from __future__ import annotations

import datetime

import pytest

from agents.verdict import SENTENCES
from approvals.selectors import pending_actions_count
from approvals.services import pending_action_approve, pending_action_execute
from gymnasia.gyms.selectors import business_today
from gymnasia.memberships.models import MembershipFreeze
from tests.agents.offline_kit import between, calls, member_conversation, talk
from tests.factories import StaffRoleFactory
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db

ASKED = "¿Desde qué día quieres congelarla? Por ejemplo: «desde el lunes que viene»."


def _next_monday(agent) -> datetime.date:
    today = business_today(business=agent.business)
    return today + datetime.timedelta(days=7 - today.weekday())


def _march(agent) -> int:
    """The year of the next 20 March, as the model reads «de marzo»."""
    today = business_today(business=agent.business)
    return today.year + ((3, 20) < (today.month, today.day))


def test_a_two_week_freeze_is_asked_confirmed_and_sent_to_staff(
    client, agent, monkeypatch
):
    monkeypatch.setattr(
        "approvals.tasks.execute_approved_action.delay", lambda action_id: None
    )
    started = member_conversation(client, agent)
    start, end = _next_monday(agent), _next_monday(agent) + datetime.timedelta(13)

    asked, proposed = talk(
        client,
        started,
        "Quiero congelar mi membresía dos semanas",
        "desde el lunes que viene",
    )
    assert asked == ASKED
    assert proposed == f"¿Pido que congelen tu cuota {between(start, end)}?"
    assert not ToolCallLog.objects.exists()

    [waits] = talk(client, started, "sí")

    assert calls() == [
        ("freeze_membership", {"start": start.isoformat(), "end": end.isoformat()})
    ]
    assert waits == (
        f"{SENTENCES['es']['waits']}\n\nLa congelación {between(start, end)} queda "
        "pendiente de que el equipo la apruebe."
    )
    request = ToolCallLog.objects.get()
    pending_action_approve(
        action_id=request.pk,
        user=StaffRoleFactory(business=agent.business, role="staff").user,
    )
    pending_action_execute(action_id=request.pk)
    assert MembershipFreeze.objects.get().start == start
    assert _last_message(client, started) == (f"Cuota congelada {between(start, end)}.")


def _last_message(client, started) -> str:
    data = started.json()
    response = client.get(
        f"/api/v1/conversations/{data['conversation']}/messages",
        headers={"Authorization": f"Bearer {data['token']}"},
    )
    return response.json()["messages"][-1]["text"]


def test_days_that_cannot_be_are_told_and_the_question_stays(client, agent):
    started = member_conversation(client, agent)
    year = _march(agent)

    _, impossible, reversed_, proposed = talk(
        client,
        started,
        "Quiero congelar mi membresía dos semanas",
        "del 30 de febrero al 5 de marzo",
        "del 20 al 10 de marzo",
        "desde el lunes que viene",
    )

    assert impossible == f"La fecha {year}-02-30 no existe. {ASKED}"
    assert reversed_ == (
        f"El final ({year}-03-10) es anterior al inicio ({year}-03-20). {ASKED}"
    )
    assert proposed.startswith("¿Pido que congelen tu cuota del ")
    assert not ToolCallLog.objects.exists()


def test_a_no_to_the_days_said_back_changes_nothing(client, agent):
    started = member_conversation(client, agent)

    *_, told = talk(
        client,
        started,
        "Quiero congelar mi membresía dos semanas",
        "desde el lunes que viene",
        "no",
    )

    assert told == "De acuerdo: no cambio nada."
    assert not ToolCallLog.objects.exists()


@pytest.mark.parametrize(
    ("asked", "days"),
    [
        ("Congela mi membresía del 1 al 10 de agosto", ("08-01", "08-10")),
        ("Congela mi cuota en agosto", ("08-01", "08-31")),
        ("Freeze my membership from 1 to 10 May", ("05-01", "05-10")),
    ],
)
def test_days_said_outright_are_sent_to_staff_at_once(client, agent, asked, days):
    sub = "socio-1003" if asked.startswith("Freeze") else "socio-1001"

    [told] = talk(client, member_conversation(client, agent, sub=sub), asked)

    [(name, arguments)] = calls()
    assert name == "freeze_membership"
    assert (arguments["start"][5:], arguments["end"][5:]) == days
    language = "en" if sub == "socio-1003" else "es"
    assert told.startswith(SENTENCES[language]["waits"])


@pytest.mark.parametrize(
    ("sub", "asked"),
    [
        ("socio-1001", "Congela mi cuota del 1 al 10 de agosto"),
        ("socio-1003", "Freeze my membership from 1 to 10 May"),
    ],
)
def test_the_same_freeze_asked_twice_is_one_request(client, agent, sub, asked):
    """The repeat is told R10's "already waits" sentence, not "I have sent your
    request" again, and the staff's inbox still holds one request."""
    language = "en" if sub == "socio-1003" else "es"
    started = member_conversation(client, agent, sub=sub)
    staff = StaffRoleFactory(business=agent.business, role="staff").user
    talk(client, started, asked)
    waiting = pending_actions_count(user=staff)

    [again] = talk(client, started, asked)

    assert waiting == 1
    assert pending_actions_count(user=staff) == 1
    assert ToolCallLog.objects.filter(status="pending_approval").count() == 1
    assert again.startswith(SENTENCES[language]["already_waits"] + "\n\n")
    assert SENTENCES[language]["waits"] not in again
