"""How her requests stand, through the conversation API with the demo model in
Spanish and English: each request named by what it is about (the class's name
and time, the freeze's days) and its state, read with ``list_my_requests``."""

from __future__ import annotations

import pytest

from approvals.services import pending_action_reject
from gymnasia.gyms.selectors import business_today
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    classes_on_a_later_day,
    member_conversation,
    reply_to,
)
from tests.factories import StaffRoleFactory
from tools.models import AgentToolSetting, ToolCallLog

pytestmark = pytest.mark.django_db


@pytest.fixture
def bookings_gated(agent):
    AgentToolSetting.objects.filter(agent=agent, tool_name="book_class").update(
        mode=AgentToolSetting.Mode.APPROVAL
    )
    return agent


def test_a_gated_booking_is_named_when_asked_and_when_asked_about(
    client, bookings_gated
):
    agent = bookings_gated
    day, _ = classes_on_a_later_day(agent, "Spinning", hours=(18,))
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")

    asked = reply_to(send(client, started, "Reserva la primera"))

    assert asked.endswith(
        f"La reserva de Spinning el {day} 18:00 queda pendiente de que el equipo "
        "la apruebe."
    )
    reply = reply_to(send(client, started, "¿Cómo va mi solicitud?"))
    assert reply == (
        f"Tus solicitudes:\n- Reserva de Spinning el {day} 18:00: esperando al equipo"
    )
    assert ToolCallLog.objects.filter(tool_name="book_class").count() == 1


def test_how_is_my_request_going_in_english_names_the_freeze_and_its_state(
    client, agent
):
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    year = business_today(business=agent.business).year + 1
    send(client, started, f"Freeze my membership from {year}-03-01 to {year}-03-10")

    reply = reply_to(send(client, started, "How is my request going?"))

    assert reply == (
        f"Your requests:\n- Freeze from {year}-03-01 to {year}-03-10: waiting for "
        "the staff"
    )


def test_what_happened_to_my_freeze_says_it_was_rejected_and_why(client, agent):
    started = member_conversation(client, agent)
    year = business_today(business=agent.business).year + 1
    send(client, started, f"Congela mi cuota del {year}-03-01 al {year}-03-10")
    staff = StaffRoleFactory(business=agent.business, role="staff").user
    request = ToolCallLog.objects.get(tool_name="freeze_membership")
    pending_action_reject(action_id=request.pk, user=staff, reason="Marzo está lleno")

    reply = reply_to(send(client, started, "¿Qué pasa con mi congelación?"))

    assert reply == (
        f"Tus solicitudes:\n- Congelación del {year}-03-01 al {year}-03-10: "
        "rechazada («Marzo está lleno»)"
    )
