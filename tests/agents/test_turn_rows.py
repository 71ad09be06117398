"""Where a turn's rows go, and when: a step proposing a write is stored before the
write runs; the rows of steps that could not act (reads, refused calls) wait and
are written together with the turn's next row, in order, whatever ends the turn."""

from __future__ import annotations

import asyncio
import re
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext

from agents.conversations import conversation_start
from agents.models import Agent, Message
from agents.providers.base import (
    AssistantStep,
    ProviderError,
    StepDone,
    ToolResults,
    UserText,
)
from agents.turn import turn_run
from agents.turn_rows import StepRows, rows_store
from gymnasia.gyms.models import Member
from tests.agents.scripted import Say
from tests.agents.test_turn import spinning_session
from tools.models import ToolCallLog
from tools.types import ToolCall

pytestmark = pytest.mark.django_db

SEARCH = ("search_foods", {"query": "arroz"})


@pytest.fixture
def demo():
    call_command("seed_demo", stdout=StringIO())
    return Agent.objects.get(), Member.objects.get(external_id="socio-1001")


def run(conversation, text="hola") -> list[Message]:
    return async_to_sync(turn_run)(conversation, text)


def _roles() -> list[str]:
    return [m.role for m in Message.objects.order_by("pk")]


def _turns_queries(agent, member) -> list[str]:
    """The SQL of each query of a turn in a new conversation, in order."""
    conversation = conversation_start(agent=agent, member=member)
    with CaptureQueriesContext(connection) as queries:
        run(conversation)
    return [query["sql"] for query in queries.captured_queries]


def _inserts(sql: str) -> list[str]:
    """The table of each insert of a statement, in order."""
    return re.findall(r'INSERT INTO "(\w+)"', sql)


def _turns_inserts(agent, member) -> list[str]:
    """The table of each insert statement of a turn in a new conversation, in
    order."""
    return [t for sql in _turns_queries(agent, member) for t in _inserts(sql)]


def _step_of_each_log() -> dict[str, tuple[int, int]]:
    """Each logged call: the step its row points at, and the step listing its id."""
    steps = Message.objects.filter(role="step")
    listing = {
        call["id"]: step.pk for step in steps for call in step.content["tool_calls"]
    }
    return {
        log.provider_call_id: (int(log.message_key), listing[log.provider_call_id])
        for log in ToolCallLog.objects.all()
    }


def test_a_step_that_only_reads_stores_its_rows_after_its_calls(demo, model):
    """The step, its results and the reply in one statement, then every log row in
    one, each pointing at its step; nothing is written before the calls ran."""
    agent, member = demo
    model(
        Say(
            calls=[
                ("search_foods", {"query": "arroz"}),
                ("refund_payment", {"payment_id": "ch_1", "amount": 5}),  # hidden
            ]
        ),
        Say(text="Listo."),
    )
    assert _turns_inserts(agent, member) == [
        "agents_message",  # the member's message
        "agents_message",  # the step, its results and the reply
        "tools_toolcalllog",  # both calls' rows
    ]
    assert _step_of_each_log() == {
        "call_1_0": (step := Message.objects.get(role="step").pk, step),
        "call_1_1": (step, step),
    }
    assert [m.role for m in Message.objects.order_by("pk")] == [
        "member",
        "step",
        "tool_results",
        "assistant",
    ]


def test_a_step_proposing_a_write_is_stored_before_the_write_runs(demo, model):
    """The write's log row is claimed before its booking, pointing at its step,
    which is already stored; the read beside it is logged with the results."""
    agent, member = demo
    session = spinning_session(agent)
    model(
        Say(
            calls=[
                ("book_class", {"session_id": session.pk}),
                ("search_foods", {"query": "arroz"}),
            ]
        ),
        Say(text="Reservado."),
    )
    tables = _turns_inserts(agent, member)
    assert tables.index("agents_message", 1) < tables.index("tools_toolcalllog")
    assert tables.index("tools_toolcalllog") < tables.index("classes_booking")
    assert tables[tables.index("classes_booking") + 1 :] == [
        "agents_message",  # the results
        "tools_toolcalllog",  # the read's row
        "agents_message",  # the reply
    ]
    step = Message.objects.get(role="step").pk
    assert _step_of_each_log() == {"call_1_0": (step, step), "call_1_1": (step, step)}
    assert ToolCallLog.objects.get(tool_name="book_class").verification == "verified"


def test_read_steps_wait_and_are_written_together_before_the_reply(demo, model):
    """Three steps of searches and the reply cost two statements: the messages,
    then the log rows; each row points at its own step, and the order is the
    turn's."""
    agent, member = demo
    model(
        Say(calls=[SEARCH]),
        Say(calls=[("search_foods", {"query": "pan"}), SEARCH]),
        Say(calls=[("search_foods", {"query": "leche"})]),
        Say(text="Listo."),
    )
    assert _turns_inserts(agent, member) == [
        "agents_message",  # the member's message
        "agents_message",  # the three steps, their results and the reply
        "tools_toolcalllog",  # the four calls' rows
    ]
    steps = list(Message.objects.filter(role="step").order_by("pk"))
    assert _step_of_each_log() == {
        "call_1_0": (steps[0].pk, steps[0].pk),
        "call_2_0": (steps[1].pk, steps[1].pk),
        "call_2_1": (steps[1].pk, steps[1].pk),
        "call_3_0": (steps[2].pk, steps[2].pk),
    }
    assert _roles() == ["member"] + ["step", "tool_results"] * 3 + ["assistant"]


def test_the_next_turn_reads_the_waiting_steps_back_in_order(demo, model):
    """Written late, the steps are still the conversation's history, each call
    followed by its own result."""
    agent, member = demo
    model(Say(calls=[SEARCH]), Say(calls=[SEARCH]), Say(text="Listo."))
    conversation = conversation_start(agent=agent, member=member)
    run(conversation)

    provider = model(Say(text="De nada."))
    run(conversation, "gracias")

    history = provider.requests[0].history
    assert [type(item) for item in history] == [
        UserText,
        AssistantStep,
        ToolResults,
        AssistantStep,
        ToolResults,
        AssistantStep,  # the reply
        UserText,
    ]
    assert [history[1].tool_calls[0].id, history[2].results[0].call_id] == [
        "call_1_0",
        "call_1_0",
    ]
    assert [history[3].tool_calls[0].id, history[4].results[0].call_id] == [
        "call_2_0",
        "call_2_0",
    ]
    assert history[4].results[0].payload["status"] == "ok"


def test_waiting_read_steps_are_stored_before_a_write_step_and_its_claim(demo, model):
    """A write's log row is claimed pointing at its step: the earlier reads go
    first, so the conversation keeps its order."""
    agent, member = demo
    session = spinning_session(agent)
    model(
        Say(calls=[SEARCH]),
        Say(calls=[("book_class", {"session_id": session.pk})]),
        Say(text="Reservado."),
    )
    assert _turns_inserts(agent, member)[:5] == [
        "agents_message",  # the member's message
        "agents_message",  # the search's step and results, the booking's step
        "tools_toolcalllog",  # the search's row
        "tools_actionlock",
        "tools_toolcalllog",  # the booking's claim
    ]
    assert _roles() == ["member"] + ["step", "tool_results"] * 2 + ["assistant"]
    steps = list(Message.objects.filter(role="step").order_by("pk"))
    assert _step_of_each_log() == {
        "call_1_0": (steps[0].pk, steps[0].pk),
        "call_2_0": (steps[1].pk, steps[1].pk),
    }


def test_the_notice_of_an_unreachable_model_comes_after_the_waiting_steps(demo, model):
    agent, member = demo
    down = ProviderError("refused", "bad request")
    model(Say(calls=[SEARCH]), Say(error=down))
    conversation = conversation_start(agent=agent, member=member)
    added = run(conversation)

    assert [m.role for m in added] == ["member", "notice"]
    assert _roles() == ["member", "step", "tool_results", "notice"]
    assert ToolCallLog.objects.get().message_key == str(
        Message.objects.get(role="step").pk
    )


def test_a_turn_stopped_by_a_bug_still_stores_its_steps(demo, model):
    """An unexpected error ends the turn (the caller reports it), and the steps
    that ran are kept with their log rows."""
    agent, member = demo

    def broken(request):
        raise RuntimeError("a bug")

    model(Say(calls=[SEARCH]), Say(calls=[SEARCH]), broken)
    conversation = conversation_start(agent=agent, member=member)
    with pytest.raises(RuntimeError):
        run(conversation)

    assert _roles() == ["member"] + ["step", "tool_results"] * 2
    assert ToolCallLog.objects.filter(status="ok").count() == 2
    steps = list(Message.objects.filter(role="step").order_by("pk"))
    assert _step_of_each_log() == {
        "call_1_0": (steps[0].pk, steps[0].pk),
        "call_2_0": (steps[1].pk, steps[1].pk),
    }


class WaitsForever:
    """A model that searches once, then never answers."""

    name = "scripted"

    def __init__(self) -> None:
        self.waiting = asyncio.Event()

    async def stream(self, request):
        if len(request.history) == 1:
            call = ToolCall(id="call_1_0", name=SEARCH[0], arguments=SEARCH[1])
            yield StepDone(text="", tool_calls=(call,))
            return
        self.waiting.set()
        await asyncio.Event().wait()
        yield  # pragma: no cover


def test_a_cancelled_turn_still_stores_its_steps(demo, monkeypatch):
    """A turn cancelled while it waits for the model (its client went away)
    keeps the step that ran."""
    agent, member = demo
    provider = WaitsForever()
    monkeypatch.setattr("agents.turn.provider_for", lambda agent, c: provider)
    conversation = conversation_start(agent=agent, member=member)

    async def cancelled() -> None:
        turn = asyncio.ensure_future(turn_run(conversation, "busca arroz"))
        await provider.waiting.wait()
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn

    async_to_sync(cancelled)()

    assert _roles() == ["member", "step", "tool_results"]
    log = ToolCallLog.objects.get()
    assert (log.status, log.message_key) == (
        "ok",
        str(Message.objects.get(role="step").pk),
    )


@pytest.mark.postgres
def test_on_postgresql_the_waiting_rows_and_the_reply_are_one_statement(demo, model):
    """The steps' messages, the reply and the log rows reach the server in one
    statement, which gives the messages their keys and the log rows their steps';
    the reply alone is one insert."""
    agent, member = demo
    model(Say(calls=[SEARCH]), Say(calls=[SEARCH]), Say(text="Listo."))
    queries = _turns_queries(agent, member)
    writes = [sql for sql in queries if _inserts(sql)]
    assert [_inserts(sql) for sql in writes] == [
        ["agents_message"],  # the member's message
        ["agents_message", "tools_toolcalllog"],  # steps, results, reply; logs
    ]
    assert not any("nextval" in sql for sql in queries)
    steps = list(Message.objects.filter(role="step").order_by("pk"))
    assert _step_of_each_log() == {
        "call_1_0": (steps[0].pk, steps[0].pk),
        "call_2_0": (steps[1].pk, steps[1].pk),
    }
    assert _roles() == ["member"] + ["step", "tool_results"] * 2 + ["assistant"]

    model(Say(text="De nada."))
    inserts = [_inserts(sql) for sql in _turns_queries(agent, member)]
    assert [tables for tables in inserts if tables] == [
        ["agents_message"],  # the member's message
        ["agents_message"],  # the reply
    ]


@pytest.mark.django_db(transaction=True)
def test_the_steps_rows_are_written_whole_or_not_at_all(row_counts):
    """A log row the database refuses leaves none of the messages written with
    it, and the connection goes on (autocommit, as a turn's database work runs)."""
    call_command("seed_demo", stdout=StringIO())
    conversation = conversation_start(agent=Agent.objects.get(), member=None)

    def rows(tool_name) -> tuple[list[StepRows], Message]:
        step = Message(
            conversation=conversation,
            role="step",
            content={"tool_calls": [{"id": "call_1_0"}]},
        )
        results = Message(conversation=conversation, role="tool_results")
        log = ToolCallLog(
            business=conversation.business,
            conversation_key=str(conversation.pk),
            provider_call_id="call_1_0",
            tool_name=tool_name,
        )
        reply = Message(conversation=conversation, role="assistant", text="Listo.")
        return [StepRows(step, results, [log])], reply

    before = row_counts()
    with pytest.raises(IntegrityError):
        rows_store(*rows(None))
    assert row_counts() == before

    rows_store(*rows("search_foods"))
    assert _roles() == ["step", "tool_results", "assistant"]
    step = Message.objects.get(role="step").pk
    assert _step_of_each_log() == {"call_1_0": (step, step)}


@pytest.mark.postgres
def test_on_postgresql_log_rows_point_at_stored_and_new_steps_alike(demo):
    """A step stored before its write ran and a step written now: each log row of
    the one statement names its own step, and the server prepares that statement
    once it is used again on the connection."""
    agent, _ = demo
    conversation = conversation_start(agent=agent, member=None)

    def step_rows(call_id: str, stored: bool) -> StepRows:
        step = Message(
            conversation=conversation,
            role="step",
            content={"tool_calls": [{"id": call_id}]},
        )
        if stored:
            step.save()
        log = ToolCallLog(
            business=conversation.business,
            conversation_key=str(conversation.pk),
            provider_call_id=call_id,
            tool_name="search_foods",
        )
        return StepRows(
            step, Message(conversation=conversation, role="tool_results"), [log]
        )

    for turn in range(3):
        rows = [
            step_rows(f"call_{turn}_0", stored=True),
            step_rows(f"call_{turn}_1", stored=False),
        ]
        rows_store(rows, last=Message(conversation=conversation, role="assistant"))
        stored, new = rows[0].step.pk, rows[1].step.pk
        assert stored < new
        assert {
            log.provider_call_id: log.message_key
            for log in ToolCallLog.objects.filter(
                provider_call_id__startswith=f"call_{turn}_"
            )
        } == {f"call_{turn}_0": str(stored), f"call_{turn}_1": str(new)}

    assert _roles() == ["step", "tool_results", "step", "tool_results", "assistant"] * 3
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            [
                'WITH serial AS %parent AS (INSERT INTO "agents_message"%tools_toolcalllog%'
            ],
        )
        assert cursor.fetchone() == (1,)
