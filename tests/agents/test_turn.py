"""The turn loop with a scripted model: tool calls go through the dispatcher, failures
are told first (R10), cut-off steps run nothing, the member's message is kept."""

from __future__ import annotations

import datetime
import json
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.utils import timezone

from agents.conversations import conversation_start, message_json
from agents.models import Agent, Message
from agents.providers.base import ProviderError
from agents.turn import turn_run
from agents.verdict import SENTENCES
from gymnasia.classes.models import Booking, ClassSession
from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from tests.agents.scripted import Say, reply_of
from tests.faults import Fault, inject_fault
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db
ES = SENTENCES["es"]


@pytest.fixture
def demo():
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    member = Member.objects.get(external_id="socio-1001")
    return agent, member


def run(conversation, text="hola") -> tuple[list[Message], list[tuple[str, dict]]]:
    events: list[tuple[str, dict]] = []

    async def emit(name, data):
        events.append((name, data))

    added = async_to_sync(turn_run)(conversation, text, emit)
    return added, events


def spinning_session(agent, *, full=False):
    session = (
        ClassSession.objects.filter(
            business=agent.business, class_type__name="Spinning"
        )
        .filter(starts_at__gt=timezone.now() + datetime.timedelta(hours=2))
        .order_by("starts_at")
        .last()
    )
    if full:
        ClassSession.objects.filter(pk=session.pk).update(capacity=1)
        other = Member.objects.get(external_id="socio-1002")
        Booking.objects.create(business=agent.business, member=other, session=session)
    return session


LIES = "¡Hecho!"


@pytest.mark.parametrize(
    ("setup", "sentence"),
    [
        ("full_class", "not_done"),
        ("storage_failure", "not_done"),
        ("timeout_after_commit", "not_confirmed"),
        ("cannot_look_again", "not_confirmed"),
        ("gated", "waits"),
    ],
)
def test_a_lying_model_is_contradicted_first(demo, model, setup, sentence):
    agent, member = demo
    conversation = conversation_start(agent=agent, member=member)
    today = business_today(business=agent.business)
    if setup == "gated":
        call = (
            "freeze_membership",
            {
                "start": str(today.replace(day=1).replace(year=today.year + 1)),
                "end": str(today.replace(day=10).replace(year=today.year + 1)),
            },
        )
    else:
        call = (
            "book_class",
            {"session_id": spinning_session(agent, full=setup == "full_class").pk},
        )
    model(Say(calls=[call]), Say(text=LIES))
    fault = {
        "storage_failure": Fault.STORAGE_FAILURE,
        "timeout_after_commit": Fault.TIMEOUT_AFTER_COMMIT,
        "cannot_look_again": Fault.READS_UNAVAILABLE,
    }.get(setup)
    if fault:
        with inject_fault("classes", fault):
            added, events = run(conversation)
    else:
        added, events = run(conversation)
    expected = ES[sentence] + "\n\n" + LIES
    assert added[-1].role == "assistant"
    assert added[-1].text == expected
    assert reply_of(events) == expected


@pytest.mark.parametrize(
    ("member_language", "agent_language", "sentence"),
    [
        ("en", "es", "I could not make the change you asked for."),
        ("es", "en", "No he podido hacer el cambio que pediste."),
        ("", "en", "I could not make the change you asked for."),
    ],
)
def test_the_verdict_is_in_the_members_language_else_the_agents(
    demo, model, member_language, agent_language, sentence
):
    agent, member = demo
    Member.objects.filter(pk=member.pk).update(language=member_language)
    Agent.objects.filter(pk=agent.pk).update(language=agent_language)
    agent.refresh_from_db()
    member.refresh_from_db()
    full = spinning_session(agent, full=True)
    model(Say(calls=[("book_class", {"session_id": full.pk})]), Say(text=LIES))
    added, events = run(conversation_start(agent=agent, member=member))
    assert added[-1].text == sentence + "\n\n" + LIES
    assert reply_of(events) == sentence + "\n\n" + LIES


def test_a_corrected_retry_that_verified_gets_no_sentence(demo, model):
    agent, member = demo
    full = spinning_session(agent, full=True)
    free = (
        ClassSession.objects.filter(business=agent.business, capacity__gt=1)
        .exclude(pk=full.pk)
        .order_by("starts_at")
        .last()
    )
    model(
        Say(calls=[("book_class", {"session_id": full.pk})]),
        Say(calls=[("book_class", {"session_id": free.pk})]),
        Say(text="Reservado."),
    )
    before = Booking.objects.filter(member=member).count()
    added, events = run(conversation_start(agent=agent, member=member))
    statuses = {
        log.arguments["session_id"]: (log.status, log.verification)
        for log in ToolCallLog.objects.all()
    }
    assert statuses == {
        full.pk: ("invalid_arguments", "not_applied"),  # refused: the class is full
        free.pk: ("ok", "verified"),
    }
    assert Booking.objects.filter(member=member).count() == before + 1
    assert Booking.objects.filter(member=member, session=free).exists()
    assert added[-1].text == "Reservado."
    assert reply_of(events) == "Reservado."


def test_a_tool_the_filters_exclude_runs_nothing(demo, model, row_counts):
    agent, member = demo
    model(
        Say(calls=[("refund_payment", {"payment_id": "ch_123", "amount": 5})]),
        Say(text="ok"),
    )
    conversation = conversation_start(agent=agent, member=member)
    before = row_counts()
    run(conversation)
    log = ToolCallLog.objects.get(tool_name="refund_payment")
    assert (log.offered, log.status) == (False, "unknown_tool")
    changed = {
        table: (before[table], count)
        for table, count in row_counts().items()
        if count != before[table]
    }
    # Only the turn's own record: its messages and the refused call's log row.
    assert set(changed) == {"agents.Message", "tools.ToolCallLog"}
    assert changed["tools.ToolCallLog"] == (0, 1)


def test_malformed_arguments_are_invalid_and_change_nothing(demo, model):
    agent, member = demo
    model(Say(calls=[("book_class", '{"session_id": 12')]), Say(text="Lo siento."))
    before = Booking.objects.count()
    added, _ = run(conversation_start(agent=agent, member=member))
    assert ToolCallLog.objects.get().status == "invalid_arguments"
    assert Booking.objects.count() == before
    assert added[-1].text.startswith(ES["not_done"])


def test_a_cut_off_step_executes_nothing_and_keeps_the_message(demo, model):
    agent, member = demo
    session = spinning_session(agent)
    cut = Say(
        calls=[("book_class", {"session_id": session.pk})],
        error=ProviderError("cut_off", "cut"),
    )
    model(cut)
    before = Booking.objects.count()
    conversation = conversation_start(agent=agent, member=member)
    added, events = run(conversation, "Reserva spinning")
    assert Booking.objects.count() == before
    assert ToolCallLog.objects.count() == 0
    assert [m.role for m in added] == ["member", "notice"]
    assert (
        "error",
        {"error": "assistant_unavailable", "detail": added[-1].text},
    ) in events
    assert Message.objects.get(pk=added[0].pk).text == "Reserva spinning"


def test_rate_limits_are_retried_within_a_bound(demo, model):
    agent, member = demo
    limited = ProviderError("rate_limited", "slow down", retry_after=0)
    model(Say(error=limited), Say(error=limited), Say(text="Hola."))
    added, _ = run(conversation_start(agent=agent, member=member))
    assert added[-1].text == "Hola."


def test_after_the_bound_the_member_is_told_and_can_continue(demo, model):
    agent, member = demo
    overloaded = ProviderError("overloaded", "busy", retry_after=0)
    provider = model(
        Say(error=overloaded), Say(error=overloaded), Say(error=overloaded)
    )
    conversation = conversation_start(agent=agent, member=member)
    added, _ = run(conversation)
    assert [m.role for m in added] == ["member", "notice"]
    assert len(provider.requests) == 3
    model(Say(text="Ya estoy aquí."))
    added, _ = run(conversation, "¿hola?")
    assert added[-1].text == "Ya estoy aquí."


def test_parallel_calls_each_get_their_result_under_their_id(demo, model):
    agent, member = demo
    provider = model(
        Say(calls=[("search_foods", {"query": "arroz"}), ("get_membership", {})]),
        Say(text="Listo."),
    )
    run(conversation_start(agent=agent, member=member))
    results = Message.objects.get(role="tool_results").content["results"]
    assert [r["call_id"] for r in results] == ["call_1_0", "call_1_1"]
    assert [r["status"] for r in results] == ["ok", "ok"]
    second = provider.requests[1]
    assert [r.call_id for r in second.history[-1].results] == ["call_1_0", "call_1_1"]


def test_a_models_text_no_database_can_hold_is_stored_replaced(demo, model):
    """A NUL character or a lone surrogate in what the model wrote made the
    database refuse the turn's rows: the turn raised and the reply was lost."""
    agent, member = demo
    model(
        Say(text="Busco\x00", calls=[("search_foods", {"query": "arroz\x00"})]),
        Say(text="Arroz\x00 blanco \ud83d."),
    )
    conversation = conversation_start(agent=agent, member=member)

    added, events = run(conversation, "¿Arroz?")

    reply = "Arroz\ufffd blanco \ufffd."
    assert [m.role for m in added] == ["member", "assistant"]
    assert Message.objects.get(pk=added[-1].pk).text == reply
    step = Message.objects.get(role="step")
    assert step.text == "Busco\ufffd"
    assert step.content["tool_calls"][0]["arguments"] == {"query": "arroz\ufffd"}
    assert ToolCallLog.objects.get().status == "invalid_arguments"
    last_discard = max(i for i, (name, _) in enumerate(events) if name == "discard")
    deltas = [d["text"] for name, d in events[last_discard:] if name == "delta"]
    assert "".join(deltas) == reply


@pytest.mark.parametrize("text", ["", "\\u0000"], ids=["plain", "with a NUL"])
def test_arguments_an_sdk_parsed_as_deep_as_json_goes_are_refused_not_a_crash(
    demo, model, text
):
    """An SDK that hands arguments over parsed (Anthropic without streaming,
    Google) can give them 900 deep: storing the step ran out of recursion, and
    the turn raised."""
    agent, member = demo
    deep = json.loads("[" * 900 + f'"{text}"' + "]" * 900)
    model(Say(calls=[("search_foods", {"query": deep})]), Say(text="Vale."))

    added, _ = run(conversation_start(agent=agent, member=member))

    assert [m.text for m in added] == ["hola", "Vale."]
    assert ToolCallLog.objects.get().status == "invalid_arguments"
    step = Message.objects.get(role="step").content
    stored = step["tool_calls"][0]["arguments"]["query"]
    for _ in range(900):
        (stored,) = stored
    assert stored == ("\ufffd" if text else "")


def test_the_maximum_of_tool_steps_ends_the_turn(demo, model):
    agent, member = demo
    Agent.objects.filter(pk=agent.pk).update(max_tool_steps=2)
    agent.refresh_from_db()
    search = Say(calls=[("search_foods", {"query": "arroz"})])
    model(
        search,
        Say(calls=[("search_foods", {"query": "pan"})]),
        # The step that finds no steps left claims success with a call.
        Say(text="¡Reservado!", calls=[("search_foods", {"query": "leche"})]),
    )
    added, events = run(conversation_start(agent=agent, member=member))
    assert ToolCallLog.objects.count() == 2
    assert added[-1].role == "notice"
    # A streaming client drops that step's text and shows the notice.
    assert reply_of(events) == ""
    assert events[-1] == ("message", message_json(added[-1]))


def test_an_anonymous_visitor_is_offered_no_member_tool(demo, model):
    agent, _ = demo
    provider = model(Say(text="Hola."))
    run(conversation_start(agent=agent, member=None))
    offered = {spec.name for spec in provider.requests[0].tools}
    assert offered == {"search_foods", "list_classes", "handoff_to_staff"}


def test_a_member_is_offered_the_demo_tools_but_not_stripe(demo, model):
    agent, member = demo
    provider = model(Say(text="Hola."))
    run(conversation_start(agent=agent, member=member))
    offered = {spec.name for spec in provider.requests[0].tools}
    assert "book_class" in offered and "freeze_membership" in offered
    assert "refund_payment" not in offered and "list_payments" not in offered
