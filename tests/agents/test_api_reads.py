"""The conversation API's contract as DESIGN.md now writes it: reads in pages
(``limit``, ``after``, ``before``, ``more``), a body that is not JSON refused
with 415, and ``Retry-After`` on every 429."""

from __future__ import annotations

import json
import time
import uuid

import pytest
import time_machine

from agents import api
from agents.models import Conversation, Message
from tests.agents.api_client import send, start

pytestmark = pytest.mark.django_db


def _read(client, started, **params):
    data = started.json()
    return client.get(
        f"/api/v1/conversations/{data['conversation']}/messages",
        params,
        headers={"Authorization": f"Bearer {data['token']}"},
    )


def _filled(started, count):
    """``count`` messages of the conversation, alternately the member's and the
    assistant's, oldest first: their public ids."""
    conversation = Conversation.objects.get(pk=started.json()["conversation"])
    Message.objects.bulk_create(
        Message(
            conversation=conversation,
            role=Message.Role.MEMBER if n % 2 == 0 else Message.Role.ASSISTANT,
            text=f"mensaje {n}",
        )
        for n in range(count)
    )
    return [
        str(public_id)
        for public_id in Message.objects.filter(conversation=conversation)
        .order_by("pk")
        .values_list("public_id", flat=True)
    ]


def _ids(response):
    return [m["id"] for m in response.json()["messages"]]


def test_a_read_without_a_cursor_is_the_newest_page(client, agent):
    started = start(client, agent)
    ids = _filled(started, 120)

    newest = _read(client, started)

    assert newest.status_code == 200
    assert _ids(newest) == ids[-50:]  # oldest first
    assert newest.json()["more"] is True


def test_before_reads_backwards_page_by_page_to_the_first(client, agent):
    started = start(client, agent)
    ids = _filled(started, 120)

    middle = _read(client, started, before=ids[-50])
    first = _read(client, started, before=ids[20])

    assert (_ids(middle), middle.json()["more"]) == (ids[20:70], True)
    assert (_ids(first), first.json()["more"]) == (ids[:20], False)


def test_after_reads_forward_with_a_limit(client, agent):
    started = start(client, agent)
    ids = _filled(started, 30)

    page = _read(client, started, after=ids[4], limit=10)
    last = _read(client, started, after=ids[24], limit=10)

    assert (_ids(page), page.json()["more"]) == (ids[5:15], True)
    assert (_ids(last), last.json()["more"]) == (ids[25:], False)


def test_a_conversation_of_5000_messages_is_read_in_bounded_pages(client, agent):
    """Without ``after`` the read answered the whole conversation (20 MB for one
    of 5,000 messages, 426 MB in the web process for ten at once)."""
    started = start(client, agent)
    ids = _filled(started, 5000)

    newest = _read(client, started)
    pages, read, after = 0, [], ids[0]
    largest = len(newest.content)
    while True:
        page = _read(client, started, after=after, limit=100)
        largest = max(largest, len(page.content))
        pages += 1
        read += _ids(page)
        if not page.json()["more"]:
            break
        after = read[-1]

    assert len(_ids(newest)) == 50
    assert read == ids[1:] and pages == 50
    assert largest < 100 * 200  # a page of at most 100 short messages


LIMIT = "'limit' must be a whole number from 1 to 100."


@pytest.mark.parametrize(
    ("params", "detail"),
    [
        ({"limit": "0"}, LIMIT),
        ({"limit": "101"}, LIMIT),
        ({"limit": "diez"}, LIMIT),
        ({"limit": "-5"}, LIMIT),
        ({"limit": " 5"}, LIMIT),
        (
            {"after": str(uuid.uuid4()), "before": str(uuid.uuid4())},
            "Give 'after' or 'before', not both.",
        ),
        ({"after": "x"}, "'after' must be a message id."),
        ({"before": "1.5"}, "'before' must be a message id."),
        ({"after": "12"}, "'after' must be a message id."),  # a row's own id
        (
            {"before": str(uuid.uuid4())},
            "'before' names no message of this conversation.",
        ),
    ],
)
def test_a_read_asked_wrongly_is_a_clear_400(client, agent, params, detail, row_counts):
    """A read asked wrongly is a 400 whose detail names what is wrong, and
    changes nothing."""
    started = start(client, agent)
    _filled(started, 3)
    before = row_counts()

    response = _read(client, started, **params)

    assert response.status_code == 400
    assert response.json() == {"error": "bad_request", "detail": detail}
    assert row_counts() == before


def test_reads_are_rate_limited_with_retry_after(client, agent, monkeypatch):
    monkeypatch.setattr(api, "READS_PER_MINUTE", 3)
    started = start(client, agent)
    with time_machine.travel(time.time(), tick=False):  # one window
        statuses = [_read(client, started).status_code for _ in range(4)]
        refused = _read(client, started)

    assert statuses == [200, 200, 200, 429]
    assert refused.json()["error"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 60


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", ""]
)
def test_a_start_not_sent_as_json_is_refused_with_415(
    client, agent, content_type, row_counts
):
    """Sent as ``text/plain``, a browser asks no one first: any site could start
    conversations from its visitors' browsers."""
    before = row_counts()

    response = client.post(
        "/api/v1/conversations",
        json.dumps({"agent": agent.public_key}),
        content_type=content_type,
    )

    assert response.status_code == 415
    assert response.json()["error"] == "unsupported_media_type"
    assert row_counts() == before


def test_a_message_not_sent_as_json_is_refused_with_415(client, agent, row_counts):
    started = start(client, agent)
    data = started.json()
    before = row_counts()

    response = client.post(
        f"/api/v1/conversations/{data['conversation']}/messages",
        json.dumps({"text": "hola"}),
        content_type="text/plain",
        headers={"Authorization": f"Bearer {data['token']}"},
    )

    assert response.status_code == 415
    assert response.json()["error"] == "unsupported_media_type"
    assert row_counts() == before


def test_json_with_a_charset_is_json(client, agent):
    response = client.post(
        "/api/v1/conversations",
        json.dumps({"agent": agent.public_key}),
        content_type="application/json; charset=utf-8",
    )
    assert response.status_code == 201


def test_every_429_says_when_to_try_again(client, agent, monkeypatch):
    """Sends, starts and refused starts: each 429 carries ``Retry-After``, the
    seconds until the limit's minute ends."""
    monkeypatch.setattr(api, "MESSAGES_PER_MINUTE", 1)
    monkeypatch.setattr(api, "CONVERSATIONS_PER_MINUTE", 2)
    refusals = []
    with time_machine.travel(time.time(), tick=False):  # one window
        started = start(client, agent)
        send(client, started, "hola")
        refusals.append(send(client, started, "otra vez"))
        start(client, agent)
        refusals.append(start(client, agent))
        monkeypatch.setattr(api, "CONVERSATIONS_PER_MINUTE", 90)
        monkeypatch.setattr(api, "STARTS_REFUSED_PER_MINUTE", 1)
        start(client, agent, identity_token="x")
        refusals.append(start(client, agent))

    assert [r.status_code for r in refusals] == [429, 429, 429]
    for refused in refusals:
        assert refused.json()["error"] == "rate_limited"
        assert 1 <= int(refused["Retry-After"]) <= 60


def test_message_ids_are_opaque_and_tell_nothing_of_other_conversations(client, agent):
    """A message's id was the row's, one counter across every gym: any visitor
    read from two of them how many messages the whole installation held."""
    first, second = start(client, agent), start(client, agent)
    _filled(first, 3)
    _filled(second, 3)

    ids = _ids(_read(client, first)) + _ids(_read(client, second))
    rows = {str(pk) for pk in Message.objects.values_list("pk", flat=True)}

    assert len(set(ids)) == 6
    assert all(str(uuid.UUID(i)) == i for i in ids)
    assert not rows & set(ids)


def test_another_conversations_message_is_no_place_to_read_from(
    client, agent, row_counts
):
    first, second = start(client, agent), start(client, agent)
    _filled(first, 3)
    theirs = _filled(second, 3)
    before = row_counts()

    response = _read(client, first, after=theirs[0])

    assert response.status_code == 400
    assert response.json()["detail"] == "'after' names no message of this conversation."
    assert row_counts() == before
