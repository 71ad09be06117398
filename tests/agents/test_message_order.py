"""Messages of a conversation become visible in the order of their ids: a client
reading ``?after=<id>`` never passes over a message that is committed late."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from agents.conversations import conversation_start, message_add, messages_visible
from agents.models import Agent, Message

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@pytest.fixture
def conversation():
    call_command("seed_demo", stdout=StringIO())
    return conversation_start(agent=Agent.objects.get(), member=None)


def visible_texts(conversation, after=None) -> list[str]:
    return [m.text for m in messages_visible(conversation=conversation, after=after)]


def in_thread(work):
    def run():
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@contextmanager
def an_earlier_message_being_written(conversation):
    """A message inserted (its id taken) in a transaction that stays open until
    the block ends, as an approval's outcome is written."""
    inserted, release = threading.Event(), threading.Event()

    def outcome() -> None:
        with transaction.atomic():
            message_add(conversation=conversation, role=Message.Role.NOTICE, text="a")
            inserted.set()
            release.wait(10)

    writer = in_thread(outcome)
    assert inserted.wait(10)
    try:
        yield
    finally:
        release.set()
        writer.join(10)


def add_reply(conversation) -> None:
    message_add(conversation=conversation, role=Message.Role.ASSISTANT, text="b")


def store_reply(conversation) -> None:
    """As a turn stores its rows: one statement."""
    from agents.turn_rows import rows_store

    rows_store(
        [],
        last=Message(conversation=conversation, role=Message.Role.ASSISTANT, text="b"),
    )


@pytest.mark.parametrize("write", [add_reply, store_reply], ids=["alone", "turn rows"])
def test_a_message_is_not_visible_before_an_earlier_one_still_being_written(
    conversation, write
):
    """An approval's outcome, written in a transaction, took its id; a turn's
    message took the next and was committed first: a client that read it and
    then asked for what came after it never saw the outcome."""
    with an_earlier_message_being_written(conversation):
        later = in_thread(lambda: write(conversation))
        later.join(0.5)
        # While the earlier message is not committed, the later one is not either.
        seen_meanwhile = visible_texts(conversation)
    later.join(10)

    assert seen_meanwhile == []
    assert visible_texts(conversation) == ["a", "b"]


def test_other_conversations_are_not_held_up(conversation):
    other = conversation_start(agent=conversation.agent, member=None)

    with an_earlier_message_being_written(conversation):
        later = in_thread(lambda: add_reply(other))
        later.join(5)
        seen_meanwhile = visible_texts(other)

    assert seen_meanwhile == ["b"]
