"""The 24-hour window: within it, replies as text; after it, an outcome staff
decided goes as the owner's template with what was asked and what happened,
or waits in the conversation while staff are told. Meta's refusals are told
to staff in words; a send is tried again only when it provably did not
arrive."""

from __future__ import annotations

import datetime
import json

import pytest
import time_machine
from django.utils import timezone, translation

from agents.models import Conversation, WhatsAppReply
from agents.whatsapp.sending import HAPPENED_LIMIT
from approvals.services import (
    pending_action_approve,
    pending_action_execute,
    pending_action_reject,
)
from gymnasia.memberships.models import MembershipFreeze
from gymnasia.when import when_written
from tests.agents.offline_kit import between
from tests.agents.scripted import Say
from tests.agents.whatsapp_kit import LUCIA, Turns, connect
from tests.factories import StaffRoleFactory
from tools.models import AgentToolSetting, Handoff, ToolCallLog
from tools.presentation import handoff_described

pytestmark = pytest.mark.django_db
TEMPLATE = "resultado_solicitud"
NEXT_DAY = datetime.timedelta(hours=26)


@pytest.fixture
def turns(monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(
        "approvals.tasks.execute_approved_action.delay", lambda action_id: None
    )
    return Turns(monkeypatch, django_capture_on_commit_callbacks)


@pytest.fixture
def freeze_asked(client, agent, graph, turns):
    """Lucía asked on WhatsApp for a two weeks' freeze, which waits for staff
    (the owner lets requests wait three days)."""
    connect(agent, graph)
    AgentToolSetting.objects.filter(tool_name="freeze_membership").update(
        approval_valid_minutes=3 * 24 * 60
    )
    for text in (
        "Quiero congelar mi membresía dos semanas",
        "desde el lunes que viene",
        "sí",
    ):
        turns.post(client, agent, graph.inbound_text(LUCIA, text))
        turns.run()
    waits = graph.texts_to(LUCIA)[-1]
    assert waits.startswith("He enviado tu solicitud al equipo del gimnasio")
    return ToolCallLog.objects.get(tool_name="freeze_membership")


def _approve(agent, request, turns, capture) -> None:
    staff = StaffRoleFactory(business=agent.business, role="staff").user
    with capture(execute=True):
        pending_action_approve(action_id=request.pk, user=staff)
    with capture(execute=True):
        pending_action_execute(action_id=request.pk)
    turns.send_delivered()


def test_staff_approve_the_next_day_and_the_member_gets_the_template(
    agent, graph, turns, freeze_asked, django_capture_on_commit_callbacks
):
    connect(agent, graph, template_name=TEMPLATE, template_language="es")
    graph.add_template(TEMPLATE, language="es", body_params=2)
    texts_before = len(graph.texts_to(LUCIA))

    with time_machine.travel(timezone.now() + NEXT_DAY):
        _approve(agent, freeze_asked, turns, django_capture_on_commit_callbacks)

    freeze = MembershipFreeze.objects.get()
    template = graph.sent[-1]
    assert template["type"] == "template"
    assert template["failure"] is None
    sent = template["json"]["template"]
    assert (sent["name"], sent["language"]["code"]) == (TEMPLATE, "es")
    asked, happened = [p["text"] for p in sent["components"][0]["parameters"]]
    with translation.override("es"):
        said = when_written(freeze.start, freeze.end)
    assert asked == f"Congelar la cuota {said}"
    assert happened == f"Cuota congelada {between(freeze.start, freeze.end)}."
    assert len(graph.texts_to(LUCIA)) == texts_before
    assert WhatsAppReply.objects.filter(kind="template", status="accepted").count() == 1


def test_with_no_template_the_outcome_waits_and_staff_are_told(
    agent, graph, turns, freeze_asked, django_capture_on_commit_callbacks
):
    sent_before = len(graph.sent)

    with time_machine.travel(timezone.now() + NEXT_DAY):
        _approve(agent, freeze_asked, turns, django_capture_on_commit_callbacks)

    assert MembershipFreeze.objects.exists()
    assert len(graph.sent) == sent_before
    conversation = Conversation.objects.get()
    assert conversation.messages.last().text.startswith("Cuota congelada")
    case = Handoff.objects.get(cause=Handoff.Cause.WHATSAPP_UNREACHED)
    assert case.member.external_id == "socio-1001"
    assert "no tiene plantilla de resultado" in handoff_described(case).known


def test_within_the_day_the_outcome_goes_as_text(
    agent, graph, turns, freeze_asked, django_capture_on_commit_callbacks
):
    connect(agent, graph, template_name=TEMPLATE)

    with time_machine.travel(timezone.now() + datetime.timedelta(hours=2)):
        _approve(agent, freeze_asked, turns, django_capture_on_commit_callbacks)

    assert graph.texts_to(LUCIA)[-1].startswith("Cuota congelada")
    assert graph.sent[-1]["type"] == "text"


def _one_reply(client, agent, graph, turns, model) -> None:
    model(Say(text="Hola, Lucía."))
    turns.post(client, agent, graph.inbound_text(LUCIA, "Hola"))
    turns.run()


@pytest.mark.parametrize(
    "fault,code", [("rate_limited", 130429), ("pair_rate_limited", 131056)]
)
def test_a_refusal_is_recorded_and_told_to_staff_in_words(
    client, agent, graph, turns, model, fault, code
):
    connect(agent, graph)
    graph.fault(fault)

    _one_reply(client, agent, graph, turns, model)

    reply = WhatsAppReply.objects.get()
    assert (reply.status, reply.error_code) == ("refused", code)
    case = Handoff.objects.get(cause=Handoff.Cause.WHATSAPP_UNREACHED)
    assert str(code) in case.known
    assert graph.count("POST", "/messages") == 1


def test_a_template_missing_is_told_to_staff(
    agent, graph, turns, freeze_asked, django_capture_on_commit_callbacks
):
    connect(agent, graph, template_name="no_such_template")

    with time_machine.travel(timezone.now() + NEXT_DAY):
        _approve(agent, freeze_asked, turns, django_capture_on_commit_callbacks)

    reply = WhatsAppReply.objects.get(kind="template")
    assert (reply.status, reply.error_code) == ("refused", 132001)
    case = Handoff.objects.get(cause=Handoff.Cause.WHATSAPP_UNREACHED)
    assert "La plantilla no existe" in case.known


def test_a_refused_connection_is_tried_again_and_sent_once(
    client, agent, graph, turns, model
):
    connect(agent, graph)
    graph.fault("refused", seconds=0.5)

    _one_reply(client, agent, graph, turns, model)

    assert graph.texts_to(LUCIA) == ["Hola, Lucía."]
    assert WhatsAppReply.objects.get().status == "accepted"


@pytest.mark.parametrize("fault", ["error_500", "lost_after"])
def test_a_send_whose_answer_is_lost_is_not_sent_again(
    client, agent, graph, turns, model, fault
):
    connect(agent, graph)
    graph.fault(fault)

    _one_reply(client, agent, graph, turns, model)

    assert graph.count("POST", "/messages") == 1
    assert WhatsAppReply.objects.get().status == "unknown"
    assert Handoff.objects.filter(cause=Handoff.Cause.WHATSAPP_UNREACHED).exists()


def test_a_failed_status_from_meta_is_told_to_staff(client, agent, graph, turns, model):
    connect(agent, graph)
    graph.not_on_whatsapp(LUCIA)
    _one_reply(client, agent, graph, turns, model)
    reply = WhatsAppReply.objects.get()

    for callback in graph.status_callbacks_for(reply.wamid):
        turns.post(client, agent, callback)

    reply.refresh_from_db()
    assert (reply.status, reply.error_code) == ("failed", 131026)
    case = Handoff.objects.get(cause=Handoff.Cause.WHATSAPP_UNREACHED)
    assert "no está en WhatsApp" in case.known
    assert json.loads(json.dumps(case.tried))["code"] == 131026


def test_statuses_reach_read(client, agent, graph, turns, model):
    connect(agent, graph)
    _one_reply(client, agent, graph, turns, model)
    reply = WhatsAppReply.objects.get()

    for callback in reversed(graph.status_callbacks_for(reply.wamid)):
        turns.post(client, agent, callback)

    reply.refresh_from_db()
    assert reply.status == "read"


def test_a_rejection_within_the_day_is_told_on_whatsapp(
    agent, graph, turns, freeze_asked, django_capture_on_commit_callbacks
):
    staff = StaffRoleFactory(business=agent.business, role="staff").user

    with django_capture_on_commit_callbacks(execute=True):
        pending_action_reject(action_id=freeze_asked.pk, user=staff, reason="Fechas")
    turns.send_delivered()

    told = graph.texts_to(LUCIA)[-1]
    assert told.startswith("El equipo del gimnasio no ha aprobado tu solicitud")
    assert "Fechas" in told


def test_template_parameters_are_one_line_and_bounded(
    client, agent, graph, turns, model
):
    connect(agent, graph, template_name=TEMPLATE)
    graph.add_template(TEMPLATE, language="es", body_params=2)
    model(Say(text="Primera línea.\n\n" + "palabra " * 400))
    long_ago = int((timezone.now() - NEXT_DAY).timestamp())  # its reply is late
    turns.post(client, agent, graph.inbound_text(LUCIA, "Hola", timestamp=long_ago))

    turns.run()

    template = graph.sent[-1]
    assert (template["type"], template["failure"]) == ("template", None)
    asked, happened = [
        p["text"] for p in template["json"]["template"]["components"][0]["parameters"]
    ]
    assert asked == "Hola"
    assert "\n" not in happened and len(happened) <= HAPPENED_LIMIT
    assert happened.startswith("Primera línea. palabra palabra")


def test_the_staff_inbox_shows_a_request_came_on_whatsapp(
    client, agent, graph, turns, freeze_asked
):
    client.force_login(StaffRoleFactory(business=agent.business, role="staff").user)

    page = client.get("/inbox/", headers={"Accept-Language": "es"}).content.decode()

    assert "En WhatsApp" in page
    assert "He enviado tu solicitud al equipo" in page
