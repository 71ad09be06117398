"""The conversation API v1 refuses a body it cannot take, in its words and with
nothing stored: text no database can store, JSON nested past the parser or the
checks, a body past the upload limit, a bad ``after``, a method it does not
take (found by fuzzing and probing)."""

from __future__ import annotations

import pytest

from tests.agents.api_client import start
from tests.agents.scripted import Say

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "body",
    [
        b'{"text": "a\\u0000b"}',
        b'{"text": "\\ud800"}',
        b'{"text": "hola", "extra": ["\\udfff"]}',
    ],
)
def test_text_no_database_can_store_is_a_bad_request(client, agent, body, row_counts):
    """JSON can spell NUL characters and lone surrogates; they are refused before
    anything is stored (found by fuzzing: a server error on PostgreSQL)."""
    started = start(client, agent).json()
    before = row_counts()

    response = client.post(
        f"/api/v1/conversations/{started['conversation']}/messages",
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {started['token']}"},
    )

    assert response.status_code == 400
    assert response.json()["error"] == "bad_request"
    assert row_counts() == before


NESTED = b"[" * 100_000 + b"]" * 100_000


def _post_message(client, started, body):
    return client.post(
        f"/api/v1/conversations/{started['conversation']}/messages",
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {started['token']}"},
    )


def test_a_body_nested_past_the_parser_is_a_bad_request(client, agent, row_counts):
    """Found by probing: a server error (the parser's recursion ran out)."""
    started = start(client, agent).json()
    before = row_counts()

    response = _post_message(client, started, b'{"text": "hola", "x": ' + NESTED + b"}")

    assert (response.status_code, response.json()["error"]) == (400, "bad_request")
    assert row_counts() == before


def test_a_body_the_parser_takes_is_never_too_deep_for_the_checks(client, agent, model):
    """The parser takes 600 levels; the look for characters no database holds
    ran out of recursion first (a server error). Fields the API does not know
    are ignored, however deep."""
    model(Say(text="Hola."))
    started = start(client, agent).json()

    response = _post_message(
        client, started, b'{"text": "hola", "x": ' + b"[" * 600 + b"]" * 600 + b"}"
    )

    assert response.status_code == 200
    assert response.json()["messages"][-1]["text"] == "Hola."


def test_a_start_nested_too_deep_is_a_bad_request(client, agent, row_counts):
    before = row_counts()

    response = client.post(
        "/api/v1/conversations",
        b'{"agent": "x", "y": ' + NESTED + b"}",
        content_type="application/json",
    )

    assert (response.status_code, response.json()["error"]) == (400, "bad_request")
    assert row_counts() == before


@pytest.mark.parametrize("path", ["conversations", "messages"])
def test_a_body_past_the_upload_limit_is_too_long(client, agent, path, row_counts):
    """Django refused it with its own HTML page, not the API's JSON error."""
    started = start(client, agent).json()
    url = (
        "/api/v1/conversations"
        if path == "conversations"
        else f"/api/v1/conversations/{started['conversation']}/messages"
    )
    before = row_counts()

    response = client.post(
        url,
        {"agent": agent.public_key, "text": "x" * 3_000_000},
        content_type="application/json",
        headers={"Authorization": f"Bearer {started['token']}"},
    )

    assert (response.status_code, response.json()["error"]) == (413, "too_long")
    assert row_counts() == before


@pytest.mark.parametrize(
    "body",
    [
        b'{"agent": "a\\u0000b"}',
        b'{"agent": "\\ud800"}',
        b'{"agent": "AGENT", "identity_token": "\\ud800"}',
    ],
)
def test_a_start_no_database_can_store_is_a_bad_request(
    client, agent, body, row_counts
):
    before = row_counts()

    response = client.post(
        "/api/v1/conversations",
        body.replace(b"AGENT", agent.public_key.encode()),
        content_type="application/json",
    )

    assert response.status_code == 400
    assert row_counts() == before


@pytest.mark.parametrize("after", ["²", "١٢", "1" * 19, "-1", "1.0"])
def test_after_must_be_a_plain_message_id(client, agent, after):
    """Only ASCII digits name a message (``²`` passed ``isdigit`` and then failed)."""
    started = start(client, agent).json()

    response = client.get(
        f"/api/v1/conversations/{started['conversation']}/messages",
        {"after": after},
        headers={"Authorization": f"Bearer {started['token']}"},
    )

    assert response.status_code == 400
    assert response.json()["error"] == "bad_request"


def test_a_method_the_api_does_not_take_says_which_it_does(client, agent):
    started = start(client, agent).json()
    bearer = {"Authorization": f"Bearer {started['token']}"}

    on_start = client.put("/api/v1/conversations")
    on_messages = client.delete(
        f"/api/v1/conversations/{started['conversation']}/messages", headers=bearer
    )

    assert (on_start.status_code, on_start["Allow"]) == (405, "POST, OPTIONS")
    assert (on_messages.status_code, on_messages["Allow"]) == (
        405,
        "GET, POST, OPTIONS",
    )
