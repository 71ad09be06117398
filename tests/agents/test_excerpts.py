"""What staff read of a request's conversation: the turn that asked, taken from
the conversation by two queries (the turns' bounds, then their messages) that read
those turns only, however long the conversation has grown."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.conversations import conversation_excerpts, conversation_start
from agents.models import Agent, Message

pytestmark = pytest.mark.django_db

TURNS = 40


@pytest.fixture
def long_conversation():
    """Forty turns: each a member's question, a step and an answer."""
    call_command("seed_demo", stdout=StringIO())
    conversation = conversation_start(agent=Agent.objects.get(), member=None)
    steps = []
    for n in range(TURNS):
        Message.objects.create(conversation=conversation, role="member", text=f"q{n}")
        steps.append(Message.objects.create(conversation=conversation, role="step"))
        Message.objects.create(
            conversation=conversation, role="assistant", text=f"a{n}"
        )
    return str(conversation.pk), steps


def _excerpts_and_rows_read(requests):
    """The excerpts, and how many messages their queries gave the application."""
    with CaptureQueriesContext(connection) as queries:
        excerpts = conversation_excerpts(requests=requests)
    assert len(queries.captured_queries) <= 2
    with connection.cursor() as cursor:
        cursor.execute(queries.captured_queries[-1]["sql"])
        return excerpts, len(cursor.fetchall())


def test_an_excerpt_reads_its_turn_not_the_whole_conversation(long_conversation):
    conversation, steps = long_conversation
    early, late = (conversation, str(steps[3].pk)), (conversation, str(steps[30].pk))
    last = (conversation, "")

    excerpts, read = _excerpts_and_rows_read([early, late, last])

    assert {key: [m.text for m in ms] for key, ms in excerpts.items()} == {
        early: ["q3", "a3"],
        late: ["q30", "a30"],
        last: ["a38", "q39", "a39"],
    }
    # Each turn and the member's next question, and the last three: not 120 rows.
    assert read == 3 + 3 + 3


def test_the_last_turn_of_a_conversation_has_no_next_question(long_conversation):
    conversation, steps = long_conversation
    request = (conversation, str(steps[-1].pk))

    excerpts, read = _excerpts_and_rows_read([request])

    assert [m.text for m in excerpts[request]] == [f"q{TURNS - 1}", f"a{TURNS - 1}"]
    assert read == 2


def test_requests_of_no_conversation_ask_the_database_nothing():
    with CaptureQueriesContext(connection) as queries:
        excerpts = conversation_excerpts(requests=[("not-a-conversation", "7")])
    assert excerpts == {("not-a-conversation", "7"): []}
    assert queries.captured_queries == []


def test_a_step_of_another_conversation_gives_no_excerpt(long_conversation):
    _, steps = long_conversation
    other = conversation_start(agent=Agent.objects.get(), member=None)
    request = (str(other.pk), str(steps[5].pk))

    assert conversation_excerpts(requests=[request]) == {request: []}


def test_turns_of_conversations_written_at_once_stay_apart():
    """Two members talking at the same time: their messages' keys interleave, and
    each excerpt is its own conversation's turn."""
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    first, second = (conversation_start(agent=agent, member=None) for _ in range(2))
    steps = {}
    for n in range(5):
        for conversation, who in ((first, "a"), (second, "b")):
            Message.objects.create(
                conversation=conversation, role="member", text=f"{who}q{n}"
            )
        for conversation, who in ((first, "a"), (second, "b")):
            steps[who, n] = Message.objects.create(
                conversation=conversation, role="step"
            )
        for conversation, who in ((first, "a"), (second, "b")):
            Message.objects.create(
                conversation=conversation, role="assistant", text=f"{who}a{n}"
            )
    requests = [
        (str(first.pk), str(steps["a", 2].pk)),
        (str(second.pk), str(steps["b", 2].pk)),
        (str(second.pk), str(steps["b", 4].pk)),
        (str(first.pk), ""),
    ]

    excerpts = conversation_excerpts(requests=requests)

    assert [[m.text for m in excerpts[r]] for r in requests] == [
        ["aq2", "aa2"],
        ["bq2", "ba2"],
        ["bq4", "ba4"],
        ["aa3", "aq4", "aa4"],  # the conversation's last three
    ]


def test_a_notice_posted_after_the_turn_is_not_part_of_its_excerpt(
    long_conversation,
):
    """Staff corrected an earlier request of the same turn: its notice came after
    the reply, and the corrected request's excerpt ends with the reply."""
    conversation, steps = long_conversation
    last_step = steps[-1]
    Message.objects.create(
        conversation_id=conversation,
        role="notice",
        text="The gym's staff corrected your request.",
    )
    request = (conversation, str(last_step.pk))

    excerpts = conversation_excerpts(requests=[request])

    assert [m.text for m in excerpts[request]] == [f"q{TURNS - 1}", f"a{TURNS - 1}"]
