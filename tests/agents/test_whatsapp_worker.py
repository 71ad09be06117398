"""WhatsApp through the real webhook, a real Celery worker, Redis, PostgreSQL and
the fake Graph API: members answered, a delivery repeated runs one turn, and an
approval decided the next day reaches the member as the owner's template."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest
from django.utils import timezone

from agents.models import Conversation, Message, WhatsAppReply
from approvals.services import pending_action_approve
from gymnasia.memberships.models import MembershipFreeze
from tests.agents.offline_kit import between
from tests.agents.whatsapp_kit import LUCIA, STRANGER, connect, post
from tests.approvals.test_worker import Worker, wait_for
from tests.factories import StaffRoleFactory
from tools.models import AgentToolSetting, Handoff, ToolCallLog

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]
TEMPLATE = "resultado_solicitud"


@pytest.fixture
def worker(tmp_path, graph) -> Iterator[Worker]:
    from gymnasia.celery import app

    app.control.purge()
    running = Worker(
        tmp_path / "worker.log", env={"WHATSAPP_API_BASES": graph.base_url}
    )
    running.start()
    yield running
    running.stop()
    app.control.purge()


def _say(client, agent, graph, text: str, wa_id: str = LUCIA) -> str:
    """Write from ``wa_id`` and wait for the reply WhatsApp took for them."""
    before = len(graph.texts_to(wa_id))
    assert post(client, agent, graph.inbound_text(wa_id, text)).status_code == 200
    wait_for(lambda: len(graph.texts_to(wa_id)) > before)
    return graph.texts_to(wa_id)[-1]


def test_a_member_asks_for_the_rice_and_the_worker_answers(
    client, agent, graph, worker
):
    connect(agent, graph)

    reply = _say(client, agent, graph, "¿Cuántos carbohidratos tiene el arroz?")

    assert "- Arroz blanco (cocido): 28 g de hidratos de carbono" in reply
    assert Conversation.objects.get().member.external_id == "socio-1001"


def test_the_same_wamid_twice_runs_one_turn(client, agent, graph, worker):
    connect(agent, graph)
    delivery = graph.inbound_text(LUCIA, "¿Cuántos carbohidratos tiene el arroz?")

    assert post(client, agent, delivery).status_code == 200
    assert post(client, agent, delivery).status_code == 200
    wait_for(lambda: len(graph.texts_to(LUCIA)) == 1)
    assert post(client, agent, delivery).status_code == 200  # after the turn too

    wait_for(lambda: not Conversation.objects.filter(turn_holder__gt="").exists())
    assert Message.objects.filter(role="member").count() == 1
    assert len(graph.texts_to(LUCIA)) == 1
    assert graph.count("POST", "/messages") == 1


def test_an_unknown_number_is_answered_with_no_member_data(
    client, agent, graph, worker
):
    connect(agent, graph)

    reply = _say(client, agent, graph, "¿Cuál es mi cuota?", wa_id=STRANGER)

    assert Conversation.objects.get().member is None
    assert "Lucía" not in reply
    assert "añada este número a tu ficha de socio" in reply
    assert not ToolCallLog.objects.filter(tool_name="get_membership").exists()


def _freeze_waits(client, agent, graph) -> ToolCallLog:
    AgentToolSetting.objects.filter(tool_name="freeze_membership").update(
        approval_valid_minutes=3 * 24 * 60
    )
    _say(client, agent, graph, "Quiero congelar mi membresía dos semanas")
    _say(client, agent, graph, "desde el lunes que viene")
    waits = _say(client, agent, graph, "sí")
    assert waits.startswith("He enviado tu solicitud al equipo del gimnasio")
    return ToolCallLog.objects.get(tool_name="freeze_membership")


def _a_day_passes() -> datetime.datetime:
    """A day passes for the member and for Meta: her last message was 26 h ago."""
    earlier = timezone.now() - datetime.timedelta(hours=26)
    Conversation.objects.update(last_inbound_at=earlier)
    return earlier


def test_an_approval_the_next_day_reaches_the_member_as_the_template(
    client, agent, graph, worker
):
    connect(agent, graph, template_name=TEMPLATE, template_language="es")
    graph.add_template(TEMPLATE, language="es", body_params=2)
    request = _freeze_waits(client, agent, graph)
    graph.set_last_inbound(LUCIA, _a_day_passes())
    texts = len(graph.texts_to(LUCIA))

    pending_action_approve(
        action_id=request.pk,
        user=StaffRoleFactory(business=agent.business, role="staff").user,
    )

    wait_for(lambda: graph.sent[-1]["type"] == "template", 60)
    freeze = MembershipFreeze.objects.get()
    template = graph.sent[-1]["json"]["template"]
    asked, happened = [p["text"] for p in template["components"][0]["parameters"]]
    assert asked.startswith("Congelar la cuota")
    assert happened == f"Cuota congelada {between(freeze.start, freeze.end)}."
    assert graph.sent[-1]["failure"] is None
    assert len(graph.texts_to(LUCIA)) == texts


def test_with_no_template_nothing_is_sent_and_staff_are_told(
    client, agent, graph, worker
):
    connect(agent, graph)
    request = _freeze_waits(client, agent, graph)
    graph.set_last_inbound(LUCIA, _a_day_passes())
    sent = len(graph.sent)

    pending_action_approve(
        action_id=request.pk,
        user=StaffRoleFactory(business=agent.business, role="staff").user,
    )

    wait_for(
        lambda: Handoff.objects.filter(cause=Handoff.Cause.WHATSAPP_UNREACHED).exists(),
        60,
    )
    assert MembershipFreeze.objects.exists()
    assert len(graph.sent) == sent
    assert not WhatsAppReply.objects.filter(kind="template").exists()
    last = Conversation.objects.get().messages.order_by("pk").last()
    assert last.text.startswith("Cuota congelada")
