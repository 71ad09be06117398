"""The conversation API v1: every answer and error code of its table in DESIGN.md."""

from __future__ import annotations

import datetime
import time
import uuid

import jwt
import pytest
import time_machine

from agents import api
from agents.models import Conversation, Message
from gymnasia.gyms.models import Member
from tests.agents.api_client import identity, send, start
from tests.agents.scripted import Say

pytestmark = pytest.mark.django_db


def test_start_an_anonymous_conversation(client, agent):
    response = start(client, agent)
    assert response.status_code == 201
    data = response.json()
    assert set(data) == {"conversation", "token", "expires_at", "member"}
    assert data["member"] is None
    assert Conversation.objects.get(pk=data["conversation"]).member is None


def test_start_as_a_member_with_an_identity_token(client, agent):
    response = start(client, agent, identity_token=identity(agent))
    assert response.status_code == 201
    assert response.json()["member"] == "socio-1001"


def test_a_new_member_is_created_from_the_claims(client, agent):
    token = identity(agent, sub="web-777", name="Nuria Gil", email="nuria@example.com")
    assert start(client, agent, identity_token=token).status_code == 201
    member = Member.objects.get(external_id="web-777")
    assert (member.name, member.email, member.business_id) == (
        "Nuria Gil",
        "nuria@example.com",
        agent.business_id,
    )


def test_a_new_members_name_and_email_are_kept_as_far_as_they_can_be(client, agent):
    """A name or email with a NUL character or a lone surrogate made the start of
    the conversation fail on the database (a 500) instead of creating the member;
    one longer than its column is cut to it."""
    token = identity(
        agent,
        sub="web-778",
        name="Nuria\x00 Gil" + "l" * 300,
        email="\ud800@example.com",
    )

    assert start(client, agent, identity_token=token).status_code == 201

    member = Member.objects.get(external_id="web-778")
    assert member.name == ("Nuria\ufffd Gil" + "l" * 300)[:200]
    assert member.email == "\ufffd@example.com"


@pytest.mark.parametrize(
    "token_of",
    [
        lambda a: jwt.encode(
            {"sub": "socio-1001", "aud": a.public_key, "exp": int(time.time()) + 600},
            "another-secret-that-is-long-enough-to-be-real!",
            algorithm="HS256",
        ),
        lambda a: identity(a, exp=int(time.time()) - 120),
        lambda a: identity(a, aud="ag_someone_else"),
        lambda a: identity(a, exp=int(time.time()) + 7200),
        lambda a: jwt.encode(
            {"sub": "socio-1001", "aud": a.public_key, "exp": int(time.time()) + 600},
            a.identity_secret,
            algorithm="HS512",
        ),
        lambda a: "not-a-jwt",
        lambda a: jwt.encode(
            {"aud": a.public_key, "exp": int(time.time()) + 600}, a.identity_secret
        ),
        lambda a: identity(a, sub="socio\x00-1001"),
        lambda a: identity(a, sub="socio-\ud800"),
        # PyJWT takes an expiry int() can read; a string compared with the
        # clock was a server error.
        lambda a: identity(a, exp=str(int(time.time()) + 600)),
        lambda a: "",
    ],
    ids=[
        "forged",
        "expired",
        "wrong audience",
        "too long",
        "not HS256",
        "garbage",
        "no sub",
        "NUL in sub",
        "lone surrogate in sub",
        "expiry as text",
        "empty",
    ],
)
def test_an_invalid_identity_token_is_refused_never_downgraded(
    client, agent, token_of, row_counts
):
    before = row_counts()
    response = start(client, agent, identity_token=token_of(agent))
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert row_counts() == before


def test_an_unknown_agent_is_not_found(client, agent, row_counts):
    before = row_counts()
    response = client.post(
        "/api/v1/conversations", {"agent": "ag_nobody"}, content_type="application/json"
    )
    assert (response.status_code, response.json()["error"]) == (404, "not_found")
    assert row_counts() == before


BODY = (
    "The body must be a JSON object whose text has no NUL characters or lone "
    "surrogates."
)
AGENT = "'agent' must be an agent's public key."


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ("[1]", BODY),
        ("{", BODY),
        ('{"agent": 5}', AGENT),
        ('{"agent": ""}', AGENT),
        ("{}", AGENT),
        (
            '{"agent": "ag_x", "identity_token": 5}',
            "'identity_token' must be a string.",
        ),
    ],
)
def test_a_bad_start_body_is_a_bad_request(client, agent, body, detail, row_counts):
    """A start whose body is not what it takes is a 400 naming what is wrong, and
    starts nothing."""
    before = row_counts()
    response = client.post(
        "/api/v1/conversations",
        body.replace("AGENT", agent.public_key),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json() == {"error": "bad_request", "detail": detail}
    assert row_counts() == before


def test_a_message_gets_the_turns_messages(client, agent):
    started = start(client, agent)
    response = send(client, started, "¿Cuántos carbohidratos tiene el arroz?")
    assert response.status_code == 200
    messages = response.json()["messages"]
    assert [m["role"] for m in messages] == ["member", "assistant"]
    assert set(messages[0]) == {"id", "role", "text", "created_at"}
    reply = messages[1]["text"]
    assert "Arroz blanco (cocido): 28 g de hidratos de carbono" in reply
    assert "Arroz integral (cocido): 23,5 g" in reply


def test_history_after_any_message_id_is_exactly_the_later_visible_ones(client, agent):
    """After any stored id (the turn's hidden step and results rows too, or the
    newest), exactly the visible messages created later, oldest first."""
    started = start(client, agent)
    send(client, started, "¿Cuántos carbohidratos tiene el arroz?")
    send(client, started, "hola")
    data = started.json()
    stored = list(
        Message.objects.filter(conversation_id=data["conversation"]).order_by("pk")
    )
    assert {"step", "tool_results"} <= {m.role for m in stored}
    for message in stored:
        response = client.get(
            f"/api/v1/conversations/{data['conversation']}/messages",
            {"after": str(message.public_id)},
            headers={"Authorization": f"Bearer {data['token']}"},
        )
        expected = [
            str(m.public_id)
            for m in stored
            if m.pk > message.pk and m.role in ("member", "assistant", "notice")
        ]
        assert [m["id"] for m in response.json()["messages"]] == expected
        if message == stored[0]:
            assert expected  # after the first: every other visible one
    newest = client.get(
        f"/api/v1/conversations/{data['conversation']}/messages",
        {"after": str(stored[-1].public_id)},
        headers={"Authorization": f"Bearer {data['token']}"},
    )
    assert newest.json()["messages"] == []


def test_history_after_a_message_id(client, agent):
    started = start(client, agent)
    first = send(client, started, "hola").json()["messages"]
    send(client, started, "¿qué clases hay hoy?")
    data = started.json()
    response = client.get(
        f"/api/v1/conversations/{data['conversation']}/messages",
        {"after": first[-1]["id"]},
        headers={"Authorization": f"Bearer {data['token']}"},
    )
    later = response.json()["messages"]
    assert [m["role"] for m in later] == ["member", "assistant"]
    assert later[0]["text"] == "¿qué clases hay hoy?"
    everything = client.get(
        f"/api/v1/conversations/{data['conversation']}/messages",
        headers={"Authorization": f"Bearer {data['token']}"},
    ).json()["messages"]
    assert len(everything) == 4
    created = (
        Message.objects.filter(role__in=Message.VISIBLE)
        .order_by("pk")
        .values_list("public_id", flat=True)
    )
    assert [m["id"] for m in everything] == [str(i) for i in created]


def test_missing_or_bad_tokens_are_unauthorized(client, agent, row_counts):
    started = start(client, agent)
    url = f"/api/v1/conversations/{started.json()['conversation']}/messages"
    before = row_counts()
    for headers in (
        {},
        {"Authorization": "Bearer nonsense"},
        {"Authorization": "Basic x"},
    ):
        response = client.post(
            url, {"text": "hola"}, content_type="application/json", headers=headers
        )
        assert (response.status_code, response.json()["error"]) == (401, "unauthorized")
    assert row_counts() == before


def test_an_expired_token_is_unauthorized(client, agent):
    started = start(client, agent)
    with time_machine.travel(time.time() + 13 * 3600):
        response = send(client, started, "hola")
    assert (response.status_code, response.json()["error"]) == (401, "unauthorized")


def test_a_token_of_another_conversation_is_forbidden_whether_or_not_the_id_exists(
    client, agent
):
    mine, theirs = start(client, agent), start(client, agent)
    for conversation in (theirs.json()["conversation"], str(uuid.uuid4()), "not-an-id"):
        response = client.get(
            f"/api/v1/conversations/{conversation}/messages",
            headers={"Authorization": f"Bearer {mine.json()['token']}"},
        )
        assert (response.status_code, response.json()["error"]) == (403, "forbidden")


TEXT = "'text' must be 1 to 4,000 characters."


@pytest.mark.parametrize(
    ("text", "status", "code", "detail"),
    [
        ("", 400, "bad_request", TEXT),
        ("   ", 400, "bad_request", TEXT),
        (None, 400, "bad_request", TEXT),
        (["hola"], 400, "bad_request", TEXT),
        ("x" * 4001, 413, "too_long", "'text' must be at most 4,000 characters."),
    ],
)
def test_message_length_limits(client, agent, text, status, code, detail, row_counts):
    """A text that is blank, not a text, or too long is refused with the code and
    detail of its fault, and nothing is stored."""
    started = start(client, agent)
    before = row_counts()
    response = send(client, started, text)
    assert response.status_code == status
    assert response.json() == {"error": code, "detail": detail}
    assert row_counts() == before


def test_a_message_of_4000_characters_is_accepted(client, agent):
    assert send(client, start(client, agent), "x" * 4000).status_code == 200


def test_messages_are_rate_limited_per_conversation(client, agent):
    started = start(client, agent)
    with time_machine.travel(time.time(), tick=False):  # one window, whatever the clock
        statuses = [send(client, started, f"hola {n}").status_code for n in range(31)]
    assert statuses[:20] == [200] * 20
    assert statuses[-1] == 429
    assert send(client, start(client, agent), "hola").status_code == 200


def test_new_conversations_are_rate_limited_per_address(client, agent):
    with time_machine.travel(time.time(), tick=False):  # one window, whatever the clock
        statuses = [start(client, agent).status_code for _ in range(91)]
        assert start(client, agent).json()["error"] == "rate_limited"
    assert statuses[:60] == [201] * 60
    assert statuses[-1] == 429


def test_refused_starts_leave_an_address_its_sixty_conversations(client, agent):
    """A start refused for an unknown agent or a bad token used up a place: after
    31 of them, the 60th conversation of the minute was refused."""
    with time_machine.travel(time.time(), tick=False):  # one window, whatever the clock
        for _ in range(31):
            refused = client.post(
                "/api/v1/conversations",
                {"agent": "ag_nobody"},
                content_type="application/json",
            )
            assert refused.status_code == 404
            assert start(client, agent, identity_token="x").status_code == 401
        statuses = [start(client, agent).status_code for _ in range(60)]
    assert statuses == [201] * 60


def test_refused_starts_are_rate_limited_per_address(client, agent, row_counts):
    with time_machine.travel(time.time(), tick=False):  # one window, whatever the clock
        for _ in range(api.STARTS_REFUSED_PER_MINUTE):
            assert start(client, agent, identity_token="x").status_code == 401
        before = row_counts()

        response = start(client, agent)

        assert (response.status_code, response.json()["error"]) == (
            429,
            "rate_limited",
        )
        assert row_counts() == before


def test_a_conversation_is_not_limited_by_what_its_address_sent_elsewhere(
    client, agent, model
):
    """Members behind one address (a gym's Wi-Fi, a gym's own server calling the
    API) each get the messages a conversation is promised: a cap per address
    over all conversations refused the seventh conversation its first."""
    model(*[Say(text="Vale.")] * 140)
    with time_machine.travel(time.time(), tick=False):  # one window, whatever the clock
        conversations = [start(client, agent) for _ in range(7)]
        for started in conversations[:6]:
            for n in range(20):
                assert send(client, started, f"hola {n}").status_code == 200
        statuses = [
            send(client, conversations[6], f"hola {n}").status_code for n in range(20)
        ]
    assert statuses == [200] * 20


def test_the_token_expires_no_earlier_than_it_says(client, agent):
    """The signature's time stamp is in whole seconds; ``expires_at`` named a time
    up to a second after the token had expired."""
    with time_machine.travel(int(time.time()) + 0.9, tick=False):
        started = start(client, agent)
    expires_at = datetime.datetime.fromisoformat(started.json()["expires_at"])

    with time_machine.travel(
        expires_at - datetime.timedelta(milliseconds=1), tick=False
    ):
        response = client.get(
            f"/api/v1/conversations/{started.json()['conversation']}/messages",
            headers={"Authorization": f"Bearer {started.json()['token']}"},
        )

    assert response.status_code == 200
