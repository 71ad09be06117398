"""The demo model and the people behind the gym: how her requests stand, her
membership, a person asked for, and what it offers to help with."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from tests.agents.api_client import start
from tests.agents.offline_kit import between, calls, member_conversation, talk
from tests.tools.mindbody_world import client_of, connect_mindbody
from tools.models import AgentToolSetting, Handoff

pytestmark = pytest.mark.django_db

OFFLINE = Path(__file__).resolve().parents[2] / "agents" / "providers" / "offline"


def test_her_request_is_named_by_what_it_is_about(client, agent):
    started = member_conversation(client, agent)

    _, told = talk(
        client,
        started,
        "Congela mi cuota del 1 al 10 de agosto",
        "¿Cómo va mi solicitud?",
    )

    assert calls()[-1] == ("list_my_requests", {})
    [(start, end)] = [
        (a["start"], a["end"]) for name, a in calls() if name == "freeze_membership"
    ]
    assert told == (
        f"Tus solicitudes:\n- Congelación {between(start, end)}: esperando al equipo"
    )


def test_no_request_is_said_so(client, agent):
    [told] = talk(client, member_conversation(client, agent), "¿Cómo va mi solicitud?")

    assert told == (
        "No tienes ninguna solicitud esperando al equipo ni decidida en los "
        "últimos 7 días."
    )


def test_her_membership_is_read_in_her_language(client, agent):
    started = member_conversation(client, agent, sub="socio-1003")

    [told] = talk(client, started, "How is my membership?")

    assert calls() == [("get_membership", {})]
    assert told.startswith("Your membership «Cuota mensual» is active and ends on ")


def test_a_person_asked_for_is_a_case_for_staff(client, agent):
    [told] = talk(
        client, member_conversation(client, agent), "Quiero hablar con una persona"
    )

    assert Handoff.objects.get().reason == "Quiero hablar con una persona"
    assert told == "He avisado al equipo; te responderán aquí."


def test_without_a_handoff_the_gyms_contact_details_are_given(client, agent):
    AgentToolSetting.objects.filter(tool_name="handoff_to_staff").update(enabled=False)
    agent.business.contact_details = "Recepción: 910 000 000"
    agent.business.save(update_fields=["contact_details"])

    [told] = talk(client, start(client, agent), "Quiero hablar con una persona")

    assert told.endswith("Puedes contactar con el gimnasio: Recepción: 910 000 000")
    assert not Handoff.objects.exists()


def test_a_visitor_is_offered_only_what_a_visitor_has(client, agent):
    [told] = talk(client, start(client, agent), "hola")

    assert told == (
        "Puedo ayudarte con los nutrientes de los alimentos del gimnasio y las "
        "clases. También puedo pasarte con una persona del equipo. ¿Qué necesitas?"
    )


def test_the_model_reads_only_what_a_model_is_given():
    """No import of the tool registry or of the gym's domain: the tools come in
    the request, and refusals are told from their codes."""
    imported = set()
    for module in OFFLINE.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
    ours = {name for name in imported if name.split(".")[0] in {"tools", "gymnasia"}}
    assert ours == {"tools.types", "gymnasia.refusals", "gymnasia.when"}


def test_a_month_to_month_contract_is_said_to_have_no_end(
    client,
    agent,
    mindbody_settings,
):
    connect_mindbody(agent.business, mindbody_settings, serves=("memberships",))
    emma = client_of(mindbody_settings, Member.objects.get(external_id="socio-1003"))
    today = business_today(business=agent.business)
    mindbody_settings.add_contract(
        client_id=emma, name="Mes a mes", start=today.replace(day=1), end=None
    )
    started = member_conversation(client, agent, sub="socio-1003")

    [told] = talk(client, started, "How is my membership?")

    assert calls() == [("get_membership", {})]
    assert told == "Your membership «Mes a mes» is active, with no end date."
