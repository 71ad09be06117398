"""The demo model and the member's account: her membership and its freezes in her
language, how her requests stand, leaving the gym, and refusals said in her
language. Asking for a freeze is in ``test_offline_freezes``."""

from __future__ import annotations

import datetime

import pytest

from agents.verdict import SENTENCES
from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from gymnasia.memberships.models import MembershipFreeze
from tests.agents.api_client import send
from tests.agents.offline_kit import (
    member_conversation,
    reply_to,
)
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def _requests():
    """The requests: the calls that waited for staff (were gated)."""
    return ToolCallLog.objects.filter(expires_at__isnull=False)


def test_the_membership_state_is_said_in_her_language(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Cuándo vence mi cuota?"))

    assert reply.startswith("Tu cuota «Cuota mensual» está activa y termina el ")


@pytest.mark.parametrize(
    "said", ["¿Tengo alguna congelación?", "¿Está congelada mi cuota?"]
)
def test_a_question_about_freezes_is_answered_not_taken_for_a_request(
    client, agent, said
):
    """It asked her for the days of a freeze she had not asked for."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert reply.startswith("Tu cuota «Cuota mensual» está activa y termina el ")
    assert reply.endswith(" No tiene ninguna congelación.")
    assert not ToolCallLog.objects.filter(tool_name="freeze_membership").exists()


def test_the_membership_names_its_freezes(client, agent):
    membership = Member.objects.get(external_id="socio-1001").memberships.get()
    start = business_today(business=agent.business) + datetime.timedelta(days=10)
    MembershipFreeze.objects.create(
        business=agent.business,
        membership=membership,
        start=start,
        end=start + datetime.timedelta(days=4),
    )
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Cómo está mi cuota?"))

    end = start + datetime.timedelta(days=4)
    assert reply.endswith(f" Congelaciones: del {start} al {end}.")


@pytest.mark.parametrize(
    "asked",
    [
        "¿Han aprobado mi congelación?",
        "¿Cómo va mi solicitud?",
        "¿Qué pasa con mi petición?",
        "Is my freeze approved?",
        "What's the status of my request?",
    ],
)
def test_how_her_request_stands_is_answered_never_a_new_request(client, agent, asked):
    """ "¿Han aprobado mi congelación?" asked her for the days of a new freeze,
    and "¿Cómo va mi solicitud?" got the list of what the assistant can do."""
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1
    send(client, started, f"Congela mi cuota del {year}-03-01 al {year}-03-10")
    assert _requests().count() == 1

    reply = reply_to(send(client, started, asked))

    assert reply == (
        "Tus solicitudes:\n"
        f"- Congelación del {year}-03-01 al {year}-03-10: esperando al equipo"
    )
    assert _requests().count() == 1
    assert ToolCallLog.objects.filter(tool_name="freeze_membership").count() == 1
    assert ToolCallLog.objects.filter(tool_name="list_my_requests").count() == 1


def test_how_her_request_stands_reads_her_membership_without_list_my_requests(
    client, agent
):
    """An agent whose owner switched ``list_my_requests`` off still answers from
    the membership, which lists the freezes waiting for staff."""
    agent.tool_settings.filter(tool_name="list_my_requests").update(enabled=False)
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1
    send(client, started, f"Congela mi cuota del {year}-03-01 al {year}-03-10")

    reply = reply_to(send(client, started, "¿Cómo va mi solicitud?"))

    assert reply.endswith(
        " Congelaciones que esperan la aprobación del equipo: "
        f"del {year}-03-01 al {year}-03-10."
    )


def test_how_her_request_stands_with_none_says_so(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Cómo va mi solicitud?"))

    assert reply == (
        "No tienes ninguna solicitud esperando al equipo ni decidida en los "
        "últimos 7 días."
    )
    assert not _requests().exists()


@pytest.mark.parametrize("said", ["Quiero darme de baja", "Cancela mi cuota"])
def test_leaving_the_gym_is_said_to_be_out_of_reach_never_her_membership_state(
    client, agent, said
):
    """ "Cancela mi cuota" answered with her membership's state, as if that were
    an answer; "quiero darme de baja" got the list of what it can do."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert reply == (
        "No puedo dar de baja la cuota desde aquí. Si quieres, dime «quiero hablar "
        "con una persona» y se lo paso al equipo."
    )
    assert not ToolCallLog.objects.exists()


@pytest.mark.parametrize("asked", ["Has it been approved?", "¿Ya lo han aprobado?"])
def test_whether_it_was_approved_reads_her_requests(client, agent, asked):
    """ "Has it been approved?" after a freeze request got the list of what the
    assistant can do."""
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1
    send(client, started, f"Congela mi cuota del {year}-03-01 al {year}-03-10")

    reply = reply_to(send(client, started, asked))

    assert reply.endswith(
        f"- Congelación del {year}-03-01 al {year}-03-10: esperando al equipo"
    )
    assert _requests().count() == 1


def test_asking_whether_it_was_frozen_asks_for_no_freeze(client, agent):
    """ "¿Me habéis congelado la cuota del 1 al 10 de marzo?" asked staff for that
    freeze."""
    started = member_conversation(client, agent)

    send(client, started, "¿Me habéis congelado la cuota del 1 al 10 de marzo?")

    assert not ToolCallLog.objects.filter(tool_name="freeze_membership").exists()
    assert not _requests().exists()


def test_a_refusal_with_figures_in_it_is_said_in_her_language(client, agent):
    """A refusal with the days in it reaches a Spanish member in Spanish, its
    days filled in from the refusal's parameters (never the model's English)."""
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1
    send(client, started, f"Congela mi cuota del {year}-08-01 al {year}-08-10")
    assert _requests().count() == 1

    reply = reply_to(
        send(client, started, f"Congela mi cuota del {year}-08-05 al {year}-08-20")
    )

    assert reply == (
        SENTENCES["es"]["not_done"]
        + f"\n\nNo se ha podido: Se solapa con tu congelación del {year}-08-01 al "
        f"{year}-08-10, que espera la aprobación del equipo."
    )
    assert _requests().count() == 1
    assert not MembershipFreeze.objects.exists()
