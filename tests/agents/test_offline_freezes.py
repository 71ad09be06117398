"""The demo model and freezing the membership: the days she names, said back
when only a length or a question gave them, and asked of staff on her yes."""

from __future__ import annotations

import datetime

import pytest

from agents.providers.offline.periods import period_named, period_of_a_length
from agents.verdict import SENTENCES
from approvals.services import pending_action_approve, pending_action_execute
from gymnasia.gyms.selectors import business_today
from gymnasia.memberships.models import MembershipFreeze
from gymnasia.text import fold
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    member_conversation,
    reply_to,
)
from tests.factories import StaffRoleFactory
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def _requests():
    """The requests: the calls that waited for staff (were gated)."""
    return ToolCallLog.objects.filter(expires_at__isnull=False)


TODAY = datetime.date(2026, 11, 30)


@pytest.mark.parametrize(
    ("said", "period"),
    [
        ("Congela mi cuota del 1 al 10 de agosto", ("2027-08-01", "2027-08-10")),
        ("freeze my membership from August 3 to 9", ("2027-08-03", "2027-08-09")),
        ("congela del 1 al 10 de diciembre", ("2026-12-01", "2026-12-10")),
        # Days of this month already past: next year's.
        ("congela del 2 al 6 de noviembre", ("2027-11-02", "2027-11-06")),
        ("Congela mi cuota en agosto", ("2027-08-01", "2027-08-31")),
        ("congela 2 semanas en agosto", ("2027-08-01", "2027-08-31")),
        ("pausa 2026-12-03 2026-12-20", ("2026-12-03", "2026-12-20")),
        ("congela del 10 al 1 de agosto", None),
        ("congela del 1 al 31 de febrero", None),
        # Ordinals: the days said, never the whole month.
        (
            "freeze it from the 2nd to the 16th of February",
            ("2027-02-02", "2027-02-16"),
        ),
        ("freeze my membership August 1st-15th", ("2027-08-01", "2027-08-15")),
        # A month written short.
        ("from feb 2 to feb 16", ("2027-02-02", "2027-02-16")),
        ("pause it Sept. 3-9", ("2027-09-03", "2027-09-09")),
        ("congela del 5 al 12 de ene", ("2027-01-05", "2027-01-12")),
        # Words that are no month: "mar" (the sea), "ago" (two weeks ago).
        ("me voy al mar", None),
        ("I asked two weeks ago", None),
    ],
)
def test_the_period_a_member_names(said, period):
    named = period_named(fold(said), TODAY)
    assert (named and tuple(d.isoformat() for d in named)) == period


def test_a_freeze_of_named_days_asks_for_those_days(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Congela mi cuota del 1 al 10 de agosto"))

    log = ToolCallLog.objects.get(tool_name="freeze_membership")
    today = business_today(business=agent.business)
    year = today.year + (datetime.date(today.year, 8, 1) <= today)
    assert log.arguments == {"start": f"{year}-08-01", "end": f"{year}-08-10"}
    assert "equipo" in reply
    assert not MembershipFreeze.objects.exists()  # waits for staff approval


def test_a_freeze_that_could_not_be_made_is_refused_at_once_not_sent_to_staff(
    client, agent
):
    """An end before the start: she is told why now, and staff see no request."""
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1

    reply = reply_to(
        send(client, started, f"Quiero congelar del {year}-03-01 al {year}-02-01")
    )

    assert reply == (
        SENTENCES["es"]["not_done"]
        + "\n\nNo se ha podido: La fecha de fin no puede ser anterior a la de inicio."
    )
    assert not _requests().exists()
    assert not MembershipFreeze.objects.exists()


def test_a_freeze_asked_for_is_named_as_waiting_not_as_none(client, agent):
    """She asked for a freeze, then whether she has one: it waits for staff."""
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1
    send(client, started, f"Congela mi cuota del {year}-03-01 al {year}-03-10")

    reply = reply_to(send(client, started, "¿Tengo alguna congelación?"))

    assert reply.endswith(
        " Congelaciones que esperan la aprobación del equipo: "
        f"del {year}-03-01 al {year}-03-10."
    )
    assert "ninguna" not in reply


@pytest.mark.parametrize(
    "said",
    [
        "Cancela la solicitud de congelación",
        "Anula mi congelación",
        "Withdraw my freeze request",
        "Deshaz eso",
        "Deshaz la congelación",
    ],
)
def test_undoing_a_freeze_is_said_to_be_impossible_here_never_a_new_one(
    client, agent, said, row_counts
):
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1
    send(client, started, f"Congela mi cuota del {year}-03-01 al {year}-03-10")
    before = row_counts()

    reply = reply_to(send(client, started, said))

    assert reply == (
        "No puedo anular una congelación ni retirar una solicitud desde aquí. Si "
        "quieres, pide hablar con una persona del equipo."
    )
    after = row_counts()
    assert after.pop("agents.Message") == before.pop("agents.Message") + 2
    assert after == before  # no call, no request: only her message and the reply


def test_needing_to_freeze_is_a_request_for_days(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Tengo que congelar la cuota"))

    assert reply == "¿Desde qué día y hasta qué día quieres congelar la cuota?"


@pytest.mark.parametrize(
    "said",
    ["Congela mi cuota 2 semanas en agosto", "Freeze my membership 10 days in August"],
)
def test_a_freeze_of_a_length_without_its_days_asks_for_them(client, agent, said):
    """It asked staff to freeze the whole month."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert reply in (
        "¿Desde qué día y hasta qué día quieres congelar la cuota?",
        "From which day to which day do you want to freeze it?",
    )
    assert not _requests().exists()


def test_a_freeze_of_named_days_with_its_length_is_asked_for(client, agent):
    started = member_conversation(client, agent)

    send(client, started, "Congela mi cuota del 1 al 14 de agosto, dos semanas")

    assert _requests().get().arguments["end"].endswith("-08-14")


@pytest.mark.parametrize(
    ("sub", "asked", "days", "waits"),
    [
        (
            "socio-1003",
            "Can I freeze my membership for two weeks in January?",
            "From January 5 to January 19",
            "I have sent your request to the gym's staff",
        ),
        (
            "socio-1001",
            "Quiero congelar la cuota",
            "Del 5 al 19 de enero",
            "He enviado tu solicitud al equipo del gimnasio",
        ),
        (
            "socio-1003",
            "I want to pause my membership for two weeks in January",
            "from jan 5 to jan 19",
            "I have sent your request to the gym's staff",
        ),
        (
            "socio-1003",
            "I'd like to freeze my membership",
            "From the 5th to the 19th of January",
            "I have sent your request to the gym's staff",
        ),
    ],
)
def test_the_days_given_when_asked_for_freeze_them(
    client, agent, sub, asked, days, waits
):
    """Her answer to «from which day to which day?» got the list of what the
    assistant can do."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    assert "?" in reply_to(send(client, started, asked))
    assert not _requests().exists()

    reply = reply_to(send(client, started, days))

    assert reply.startswith(waits)
    action = _requests().get()
    year = action.arguments["start"][:4]
    assert action.arguments == {"start": f"{year}-01-05", "end": f"{year}-01-19"}


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("¿Qué clases hay mañana?", "Del 5 al 19 de enero"),
        ("Quiero congelar la cuota", "¿Qué clases hay del 5 al 10 de enero?"),
    ],
)
def test_days_of_another_question_freeze_nothing(client, agent, first, then):
    """Days said after another question, or for another question after the
    question of which days to freeze, are no freeze request."""
    started = member_conversation(client, agent)
    send(client, started, first)

    send(client, started, then)

    assert not ToolCallLog.objects.filter(tool_name="freeze_membership").exists()


def test_a_freeze_of_two_weeks_on_days_said_as_ordinals_is_those_days(client, agent):
    """ "Two weeks, from the 2nd to the 16th" was taken for a length without its
    days, and asked which days."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))

    send(
        client,
        started,
        "Freeze my membership for two weeks, from the 2nd to the 16th of February",
    )

    action = _requests().get()
    year = action.arguments["start"][:4]
    assert action.arguments == {"start": f"{year}-02-02", "end": f"{year}-02-16"}


@pytest.mark.parametrize(
    ("said", "period"),
    [
        ("dos semanas desde el 5 de enero", ("2027-01-05", "2027-01-18")),
        ("two weeks from January 5", ("2027-01-05", "2027-01-18")),
        ("for 10 days from the 3rd of February", ("2027-02-03", "2027-02-12")),
        ("una quincena a partir del 1 de marzo", ("2027-03-01", "2027-03-15")),
        ("a fortnight until March 20", ("2027-03-07", "2027-03-20")),
        ("una semana desde 2026-12-14", ("2026-12-14", "2026-12-20")),
        ("una semana desde mañana", ("2026-12-01", "2026-12-07")),
        # A length without one day of it, or with two: not this.
        ("2 semanas en agosto", None),
        ("dos semanas, del 2 al 16 de febrero", None),
        ("una semana", None),
    ],
)
def test_the_period_a_length_and_one_day_name(said, period):
    named = period_of_a_length(fold(said), TODAY)
    assert (named and tuple(d.isoformat() for d in named)) == period


def test_a_freeze_said_by_its_length_and_first_day_is_said_back_then_asked(
    client, agent
):
    """It asked her which days, though she had said them."""
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1

    reply = reply_to(
        send(
            client, started, "Quiero congelar mi cuota dos semanas desde el 5 de enero"
        )
    )

    assert reply == (
        f"¿Del {year}-01-05 al {year}-01-18? Si es así, dime «sí» y lo pido; si no, "
        "dime los días."
    )
    assert not ToolCallLog.objects.exists()
    reply = reply_to(send(client, started, "Sí, por favor"))
    assert _requests().get().arguments == {
        "start": f"{year}-01-05",
        "end": f"{year}-01-18",
    }
    assert reply == (
        SENTENCES["es"]["waits"]
        + f"\n\nLa congelación del {year}-01-05 al {year}-01-18 queda pendiente de "
        "que el equipo la apruebe."
    )


@pytest.mark.parametrize(
    ("sub", "asked", "told", "agreed", "waits"),
    [
        (
            "socio-1001",
            "¿Puedo congelar la cuota en marzo?",
            "Puedo pedírselo al equipo: ¿del {year}-03-01 al {year}-03-31? Si es "
            "así, dime «sí»; si no, dime los días.",
            "Sí",
            SENTENCES["es"]["waits"],
        ),
        (
            "socio-1001",
            "¿Se puede congelar la cuota del 1 al 15 de marzo?",
            "Puedo pedírselo al equipo: ¿del {year}-03-01 al {year}-03-15? Si es "
            "así, dime «sí»; si no, dime los días.",
            "vale",
            SENTENCES["es"]["waits"],
        ),
        (
            "socio-1003",
            "Can I freeze my membership in March?",
            "I can ask the staff for it: from {year}-03-01 to {year}-03-31? If so, "
            'say "yes"; if not, tell me the days.',
            "yes please",
            SENTENCES["en"]["waits"],
        ),
    ],
)
def test_a_freeze_asked_about_with_its_days_is_said_back_then_asked(
    client, agent, sub, asked, told, agreed, waits
):
    """ "Can I freeze it in March?" asked staff at once, for a request she may
    only have been asking about and cannot withdraw."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    year = business_today(business=agent.business).year + 1

    reply = reply_to(send(client, started, asked))

    assert reply == told.format(year=year)
    assert not ToolCallLog.objects.exists()
    reply = reply_to(send(client, started, agreed))
    assert _requests().get().arguments["start"] == f"{year}-03-01"
    assert reply.startswith(waits)


def test_a_freeze_asked_about_and_declined_is_not_asked_for(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "¿Puedo congelar la cuota en marzo?")

    reply = reply_to(send(client, started, "No"))

    assert reply == (
        "De acuerdo: no lo pido. Si quieres congelarla otros días, dímelos."
    )
    assert not _requests().exists()


def test_a_freeze_said_by_its_length_is_asked_for_on_other_days_if_she_says(
    client, agent
):
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1
    send(client, started, "Freeze my membership for two weeks from January 5")

    reply = reply_to(send(client, started, "No"))

    assert reply == (
        "De acuerdo: no lo pido. Si quieres congelarla otros días, dímelos."
    )
    send(client, started, "Del 5 al 19 de enero")
    assert _requests().get().arguments == {
        "start": f"{year}-01-05",
        "end": f"{year}-01-19",
    }


def test_a_yes_with_no_freeze_said_back_freezes_nothing(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Congela mi cuota 2 semanas en agosto")

    send(client, started, "Sí")

    assert not ToolCallLog.objects.filter(tool_name="freeze_membership").exists()
    assert not _requests().exists()


def _next_month(today: datetime.date) -> tuple[int, int]:
    return (today.year + today.month // 12, today.month % 12 + 1)


def test_days_given_without_their_month_take_the_month_of_her_request(client, agent):
    """ "From the 3rd to the 17th" after "can I pause it next month?" got the
    list of what the assistant can do."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    year, month = _next_month(business_today(business=agent.business))
    send(client, started, "Can I pause my membership next month?")

    send(client, started, "from the 3rd to the 17th")

    assert _requests().get().arguments == {
        "start": f"{year}-{month:02d}-03",
        "end": f"{year}-{month:02d}-17",
    }


@pytest.mark.parametrize(
    ("then", "month"), [("De enero", 1), ("del 3 al 17 de febrero", 2)]
)
def test_days_given_without_any_month_said_are_asked_their_month(
    client, agent, then, month
):
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1
    send(client, started, "Quiero congelar la cuota")

    asked = reply_to(send(client, started, "Del 3 al 17"))

    assert asked == "¿Del 3 al 17 de qué mes?"
    assert not ToolCallLog.objects.filter(tool_name="freeze_membership").exists()
    send(client, started, then)
    assert _requests().get().arguments == {
        "start": f"{year}-{month:02d}-03",
        "end": f"{year}-{month:02d}-17",
    }


@pytest.mark.parametrize(
    ("sub", "asked", "agreed", "thanks", "told"),
    [
        (
            "socio-1001",
            "¿Puedo congelar la cuota en marzo?",
            "Sí",
            "gracias",
            "Cuota congelada del {year}-03-01 al {year}-03-31.",
        ),
        (
            "socio-1003",
            "Can I freeze my membership in March?",
            "yes please",
            "thanks!",
            "Membership frozen from {year}-03-01 to {year}-03-31.",
        ),
    ],
)
def test_a_freeze_agreed_to_then_thanked_for_is_told_done_once_approved(
    client, agent, sub, asked, agreed, thanks, told
):
    """The request staff approve is told from its result, though she said yes to
    it and thanked since: the write-up reads the turn that asked, not her last
    message."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    year = business_today(business=agent.business).year + 1
    send(client, started, asked)
    send(client, started, agreed)
    thanked = send(client, started, thanks).json()["messages"][-1]
    action = _requests().get()
    staff = StaffRoleFactory(business=agent.business, role="staff").user

    pending_action_approve(action_id=action.pk, user=staff)
    pending_action_execute(action_id=action.pk)

    data = started.json()
    [outcome] = client.get(
        f"/api/v1/conversations/{data['conversation']}/messages",
        {"after": thanked["id"]},
        headers={"Authorization": f"Bearer {data['token']}"},
    ).json()["messages"]
    assert outcome["role"] == "assistant"
    assert outcome["text"] == told.format(year=year)
    assert MembershipFreeze.objects.count() == 1
