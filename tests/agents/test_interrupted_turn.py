"""A turn whose process stopped while a write ran (a crash, a restart): the
conversation goes on, every call of the stopped step is answered truthfully, the
write is never run again, and the sweep hands it to staff (R9) and tells the member
in R10's words."""

from __future__ import annotations

import datetime
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from io import StringIO
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import time_machine
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from agents.conversations import (
    conversation_history,
    conversation_start,
    conversation_token,
)
from agents.models import Agent, Message
from agents.providers.base import ToolResults
from agents.verdict import SENTENCES
from approvals.services import pending_actions_sweep
from gymnasia.classes.models import Booking, ClassSession
from gymnasia.gyms.models import Member
from tests.fakes.llm_server import Step, running_fake_llm
from tools.models import Handoff, ToolCallLog

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo():
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    return agent, Member.objects.get(external_id="socio-1001")


def stopped_step(conversation, *calls):
    """What a stopped turn leaves: its step, and no results."""
    return Message.objects.create(
        conversation=conversation,
        role=Message.Role.STEP,
        content={
            "tool_calls": [
                {"id": call_id, "name": name, "arguments": "{}"}
                for call_id, name in calls
            ],
            "provider_state": {},
        },
    )


def log_row(conversation, step, call_id, tool, status, **fields):
    return ToolCallLog.objects.create(
        business=conversation.business,
        member=conversation.member,
        conversation_key=str(conversation.pk),
        message_key=str(step.pk),
        provider_call_id=call_id,
        tool_name=tool,
        effect="write" if tool.startswith(("book", "add")) else "read",
        status=status,
        **fields,
    )


@pytest.mark.django_db
def test_every_call_of_a_stopped_step_is_answered_from_what_is_known(demo):
    agent, member = demo
    conversation = conversation_start(agent=agent, member=member)
    Message.objects.create(conversation=conversation, role="member", text="hola")
    step = stopped_step(
        conversation,
        ("call_done", "book_class"),
        ("call_running", "add_food_to_meal"),
        ("call_read", "search_foods"),
        ("call_never", "book_class"),
    )
    done = {"status": "ok", "booking": {"booking_id": 7}, "verification": "verified"}
    log_row(conversation, step, "call_done", "book_class", "ok", result=done)
    log_row(conversation, step, "call_running", "add_food_to_meal", "executing")
    Message.objects.create(conversation=conversation, role="member", text="¿y?")

    history = conversation_history(conversation)

    results = history[2]
    assert isinstance(results, ToolResults)
    by_id = {r.call_id: r for r in results.results}
    assert list(by_id) == ["call_done", "call_running", "call_read", "call_never"]
    assert by_id["call_done"].payload == done  # the log knows how it ended
    assert by_id["call_running"].payload["status"] == "unknown_outcome"
    assert by_id["call_running"].payload["verification"] == "unverifiable"
    # No row: a write never claimed never ran; a read's result was not kept.
    assert by_id["call_never"].payload["status"] == "failed"
    assert by_id["call_never"].payload["verification"] == "not_applied"
    assert by_id["call_read"].payload["status"] == "failed"
    assert "verification" not in by_id["call_read"].payload
    assert [r.is_error for r in results.results] == [False, True, True, True]
    assert type(history[3]).__name__ == "UserText"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("claimed_ago", "said"),
    [
        (datetime.timedelta(seconds=5), "still being made"),
        (datetime.timedelta(minutes=5), "The turn stopped"),
    ],
)
def test_a_write_claimed_moments_ago_may_still_be_running(demo, claimed_ago, said):
    """A write another turn of the conversation claimed moments ago may be running
    still (a member who sent two messages at once): the history says its outcome
    is not known yet, never that its turn stopped and staff will check it; once
    its time is surely over, it is a turn that stopped."""
    agent, member = demo
    conversation = conversation_start(agent=agent, member=member)
    Message.objects.create(conversation=conversation, role="member", text="hola")
    step = stopped_step(conversation, ("call_running", "book_class"))
    log = log_row(conversation, step, "call_running", "book_class", "executing")
    ToolCallLog.objects.filter(pk=log.pk).update(
        created_at=timezone.now() - claimed_ago
    )

    results = conversation_history(conversation)[2]

    assert isinstance(results, ToolResults)
    (result,) = results.results
    assert result.payload["status"] == "unknown_outcome"
    assert said in result.payload["message"]


@pytest.mark.django_db
def test_two_turns_storing_their_rows_in_between_keep_each_step_answered(demo):
    """Two messages of one conversation answered at once: each step's results
    carry its own calls only, whatever was stored in between."""
    agent, member = demo
    conversation = conversation_start(agent=agent, member=member)
    first = stopped_step(conversation, ("call_a", "book_class"))
    second = stopped_step(conversation, ("call_b", "book_class"))
    for step, call_id in ((first, "call_a"), (second, "call_b")):
        result = {"status": "ok", "verification": "verified", "of": call_id}
        log_row(conversation, step, call_id, "book_class", "ok", result=result)
        Message.objects.create(
            conversation=conversation,
            role=Message.Role.TOOL_RESULTS,
            content={
                "results": [
                    {
                        "call_id": call_id,
                        "status": "ok",
                        "payload": result,
                        "is_error": False,
                    }
                ]
            },
        )

    history = conversation_history(conversation)

    answers = [
        [(r.call_id, r.payload["of"]) for r in item.results]
        for item in history
        if isinstance(item, ToolResults)
    ]
    assert answers == [[("call_a", "call_a")], [("call_b", "call_b")]]


@pytest.mark.django_db
def test_a_stopped_write_is_handed_to_staff_once_its_time_is_surely_over(demo):
    agent, member = demo
    conversation = conversation_start(agent=agent, member=member)
    step = stopped_step(conversation, ("call_1", "book_class"))
    stuck = log_row(conversation, step, "call_1", "book_class", "executing")
    fresh = log_row(conversation, step, "call_2", "book_class", "executing")
    ToolCallLog.objects.filter(pk=stuck.pk).update(
        created_at=timezone.now() - datetime.timedelta(minutes=2)
    )

    assert pending_actions_sweep()["interrupted"] == 1
    assert pending_actions_sweep()["interrupted"] == 0  # once

    stuck.refresh_from_db()
    handoff = Handoff.objects.get()
    assert handoff.tool_call == stuck
    assert handoff.cause == "turn_stopped"
    assert (stuck.status, stuck.verification) == ("unknown_outcome", "unverifiable")
    assert stuck.result["handoff"] == str(handoff.pk)
    fresh.refresh_from_db()
    assert fresh.status == "executing"  # it may still be running
    # The member is told in R10's words, in their language, once.
    notices = Message.objects.filter(conversation=conversation, role="notice")
    assert [n.text for n in notices] == [
        SENTENCES[conversation.language]["not_confirmed"]
    ]


def _database_url_of_this_test() -> str:
    """The URL of the test database this process uses, for a second process."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


TURN_IN_A_PROCESS = """
import asyncio, os, django
django.setup()
from agents.models import Conversation
from agents.turn import turn_run
from tests.faults import Fault, inject_fault
conversation = Conversation.objects.select_related("agent", "member", "business").get(
    pk=os.environ["CONVERSATION"]
)
with inject_fault("classes", Fault.SLOW_WRITE):
    asyncio.run(turn_run(conversation, "Resérvame el spinning"))
"""


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_after_a_process_is_killed_mid_write_the_conversation_goes_on(
    client, settings, monkeypatch
):
    with running_fake_llm() as fake:
        settings.OPENAI_API_KEY = "sk-test"
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.base_url}/v1")
        call_command("seed_demo", provider="openai", stdout=StringIO())
        agent = Agent.objects.get()
        member = Member.objects.get(external_id="socio-1001")
        conversation = conversation_start(agent=agent, member=member)
        session = ClassSession.objects.filter(
            business=agent.business, starts_at__gt=timezone.now()
        ).first()
        bookings = Booking.objects.count()
        fake.script(
            "openai",
            [
                Step(
                    tool_calls=[("call_book", "book_class", {"session_id": session.pk})]
                )
            ],
        )

        # Given a turn in its own process, killed while its write stalls.
        turn = subprocess.Popen(
            [sys.executable, "-c", TURN_IN_A_PROCESS],
            cwd=ROOT,
            env={
                **os.environ,
                "DEBUG": "1",
                "DATABASE_URL": _database_url_of_this_test(),
                "OPENAI_API_KEY": "sk-test",
                "OPENAI_BASE_URL": f"{fake.base_url}/v1",
                "CONVERSATION": str(conversation.pk),
            },
        )
        deadline = time.monotonic() + 30
        while not ToolCallLog.objects.filter(status="executing").exists():
            assert turn.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.5)  # inside the write's stall
        turn.send_signal(signal.SIGKILL)
        turn.wait(timeout=10)

        # The database rolled the killed write back: no booking, the step unanswered.
        assert Booking.objects.count() == bookings
        assert [m.role for m in Message.objects.filter(conversation=conversation)] == [
            "member",
            "step",
        ]

        # When the member writes again, the model is asked with every call answered.
        fake.script("openai", [Step(text="Lo revisará el equipo.")])
        token, _ = conversation_token(conversation)
        response = client.post(
            f"/api/v1/conversations/{conversation.pk}/messages",
            {"text": "¿Está reservado?"},
            content_type="application/json",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert response.status_code == 200
        assert [m["role"] for m in response.json()["messages"]] == [
            "member",
            "assistant",
        ]
        assert response.json()["messages"][-1]["text"] == "Lo revisará el equipo."
        request = fake.requests["openai"][-1].body
        output = next(
            item
            for item in request["input"]
            if item.get("type") == "function_call_output"
        )
        assert output["call_id"] == "call_book"
        assert json.loads(output["output"])["status"] == "unknown_outcome"

        # And once its time is surely over, the sweep gives it to staff, never runs
        # it again, and the history says so.
        with time_machine.travel(timezone.now() + datetime.timedelta(minutes=5)):
            assert pending_actions_sweep()["interrupted"] == 1
        log = ToolCallLog.objects.get(tool_name="book_class")
        assert Handoff.objects.get().tool_call == log
        assert Booking.objects.count() == bookings
        later = client.get(
            f"/api/v1/conversations/{conversation.pk}/messages",
            headers={"Authorization": f"Bearer {token}"},
        ).json()["messages"]
        assert (later[-1]["role"], later[-1]["text"]) == (
            "notice",
            SENTENCES["es"]["not_confirmed"],
        )
        (results,) = [
            item
            for item in conversation_history(conversation)
            if isinstance(item, ToolResults)
        ]
        assert results.results[0].payload["handoff"] == str(Handoff.objects.get().pk)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_messages_sent_at_once_are_both_answered_and_the_talk_goes_on(
    client, settings, monkeypatch
):
    """A member who sends twice before the first answer (two tabs, a double
    click): each turn sees both messages and proposes the same booking, which is
    made once (R7); both are answered, and the next message still is, its history
    accepted by a provider that wants each call's result right after it."""
    with running_fake_llm() as fake:
        settings.ANTHROPIC_API_KEY = "sk-ant-test"
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        call_command("seed_demo", provider="anthropic", stdout=StringIO())
        agent = Agent.objects.get()
        member = Member.objects.get(external_id="socio-1001")
        conversation = conversation_start(agent=agent, member=member)
        token, _ = conversation_token(conversation)
        session = ClassSession.objects.filter(
            business=agent.business, starts_at__gt=timezone.now()
        ).first()
        bookings = Booking.objects.filter(member=member).count()
        ids = itertools.count(1)  # each call's own id, as the real API gives

        def model(body):
            blocks = body["messages"][-1]["content"]
            if any(block.get("type") == "tool_result" for block in blocks):
                return Step(text="Hecho.", delay=0.2)
            if "Resérvame" not in str(blocks[-1]):
                return Step(text="¿Algo más?")
            call = (f"toolu_{next(ids)}", "book_class", {"session_id": session.pk})
            return Step(tool_calls=[call], delay=0.2)

        fake.script("anthropic", model)
        url = f"/api/v1/conversations/{conversation.pk}/messages"
        auth = {"Authorization": f"Bearer {token}"}
        barrier = threading.Barrier(2)
        answers: list[tuple[int, str]] = []

        def send() -> None:
            try:
                barrier.wait()
                response = Client().post(
                    url,
                    {"text": "Resérvame el spinning"},
                    content_type="application/json",
                    headers=auth,
                )
                reply = response.json()["messages"][-1]
                answers.append((response.status_code, reply["role"]))
            finally:
                connection.close()

        threads = [threading.Thread(target=send) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert answers == [(200, "assistant"), (200, "assistant")]
        assert Booking.objects.filter(member=member).count() == bookings + 1
        assert sorted(ToolCallLog.objects.values_list("status", flat=True)) == [
            "duplicate",
            "ok",
        ]
        after = client.post(
            url, {"text": "Gracias"}, content_type="application/json", headers=auth
        )
        assert after.status_code == 200
        reply = after.json()["messages"][-1]
        assert (reply["role"], reply["text"]) == ("assistant", "¿Algo más?")
