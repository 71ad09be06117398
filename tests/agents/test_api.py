"""The conversation API v1: every answer and error code of its table in DESIGN.md."""

from __future__ import annotations

import json
import time
import uuid
from io import StringIO

import jwt
import pytest
import time_machine
from django.core.management import call_command
from django.utils.timezone import now

from agents.models import Agent, Conversation, Message
from agents.providers.base import ProviderError
from gymnasia.classes.models import Booking, ClassSession
from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from gymnasia.nutrition.models import MealEntry
from tests.agents.scripted import Say, reply_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent():
    call_command("seed_demo", stdout=StringIO())
    return Agent.objects.get()


def identity(agent, sub="socio-1001", **claims):
    payload = {
        "sub": sub,
        "aud": agent.public_key,
        "exp": int(time.time()) + 600,
        **claims,
    }
    return jwt.encode(payload, agent.identity_secret, algorithm="HS256")


def start(client, agent, **body):
    return client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key, **body},
        content_type="application/json",
    )


def send(client, started, text, token=None, accept="application/json"):
    data = started.json()
    return client.post(
        f"/api/v1/conversations/{data['conversation']}/messages",
        {"text": text},
        content_type="application/json",
        headers={"Authorization": f"Bearer {token or data['token']}", "Accept": accept},
    )


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
    ],
    ids=[
        "forged",
        "expired",
        "wrong audience",
        "too long",
        "not HS256",
        "garbage",
        "no sub",
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


@pytest.mark.parametrize("body", ["[1]", "{", '{"agent": 5}', "{}"])
def test_a_bad_start_body_is_a_bad_request(client, agent, body, row_counts):
    before = row_counts()
    response = client.post(
        "/api/v1/conversations", body, content_type="application/json"
    )
    assert (response.status_code, response.json()["error"]) == (400, "bad_request")
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
    assert "Arroz integral (cocido): 23.5 g" in reply


EVENT_SHAPES = {
    "delta": {"text"},
    "discard": set(),
    "message": {"id", "role", "text", "created_at"},
    "error": {"error", "detail"},
    "done": set(),
}


def sse_events(response) -> list[tuple[str, dict]]:
    """The events of a streamed answer, each checked against DESIGN's shape: one
    ``event:`` line, one ``data:`` line of JSON, and ``done`` last, once."""
    assert response["Content-Type"] == "text/event-stream"
    body = b"".join(response).decode()
    events = []
    for block in body.removesuffix("\n\n").split("\n\n"):
        event_line, data_line = block.split("\n")
        name = event_line.removeprefix("event: ")
        data = json.loads(data_line.removeprefix("data: "))
        assert set(data) == EVENT_SHAPES[name], (name, data)
        events.append((name, data))
    assert [name for name, _ in events].count("done") == 1
    assert events[-1] == ("done", {})
    return events


def test_a_streamed_turn_follows_the_event_protocol(client, agent):
    started = start(client, agent)
    response = send(
        client,
        started,
        "¿Cuántos carbohidratos tiene el arroz?",
        accept="text/event-stream",
    )
    events = sse_events(response)
    names = [name for name, _ in events]
    assert names[0] == "message"
    assert "discard" in names  # the search step streamed nothing worth keeping
    stored = [data for name, data in events if name == "message"]
    assert [m["role"] for m in stored] == ["member", "assistant"]
    assert stored[-1]["text"] == reply_of(events)
    assert "28" in stored[-1]["text"]


def test_a_streamed_turn_the_model_cannot_answer_ends_with_error_then_done(
    client, agent, model
):
    down = ProviderError("unavailable", "down", retry_after=0)
    model(*[Say(error=down)] * 3)
    response = send(client, start(client, agent), "hola", accept="text/event-stream")
    events = sse_events(response)
    names = [name for name, _ in events]
    assert names == ["message", "error", "message", "done"]
    notice = events[2][1]
    assert notice["role"] == "notice"
    assert events[1][1] == {"error": "assistant_unavailable", "detail": notice["text"]}


def test_a_due_verdict_is_the_first_delta_of_the_final_step(client, agent, model):
    model(
        Say(text="Reservando…", calls=[("book_class", {"session_id": 987654})]),
        Say(text="¡Hecho!"),
    )
    started = start(client, agent, identity_token=identity(agent))
    events = sse_events(send(client, started, "reserva", accept="text/event-stream"))
    last_discard = max(i for i, (name, _) in enumerate(events) if name == "discard")
    deltas = [data["text"] for name, data in events[last_discard:] if name == "delta"]
    assert deltas[0] == "No he podido hacer el cambio que pediste.\n\n"
    assert reply_of(events) == deltas[0] + "¡Hecho!"


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
    for message in [*stored, None]:
        after = message.pk if message else 0
        response = client.get(
            f"/api/v1/conversations/{data['conversation']}/messages",
            {"after": str(after)},
            headers={"Authorization": f"Bearer {data['token']}"},
        )
        expected = [
            str(m.pk)
            for m in stored
            if m.pk > after and m.role in ("member", "assistant", "notice")
        ]
        assert [m["id"] for m in response.json()["messages"]] == expected
    assert expected  # after 0: everything visible
    newest = client.get(
        f"/api/v1/conversations/{data['conversation']}/messages",
        {"after": str(stored[-1].pk)},
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
    assert [int(m["id"]) for m in everything] == sorted(
        int(m["id"]) for m in everything
    )


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


@pytest.mark.parametrize(
    ("text", "status", "code"),
    [
        ("", 400, "bad_request"),
        ("   ", 400, "bad_request"),
        ("x" * 4001, 413, "too_long"),
    ],
)
def test_message_length_limits(client, agent, text, status, code, row_counts):
    started = start(client, agent)
    before = row_counts()
    response = send(client, started, text)
    assert (response.status_code, response.json()["error"]) == (status, code)
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


def test_a_member_gets_their_own_diary_whatever_the_arguments(client, agent):
    """Through the offline model: the member's diary of the gym's today."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1002"))
    other = Member.objects.get(external_id="socio-1001")
    MealEntry.objects.create(
        business=agent.business,
        member=other,
        date=business_today(business=agent.business),
        meal="lunch",
        food=agent.business.foods.first(),
        grams=100,
    )
    messages = send(client, started, "¿Qué he comido hoy en mi diario?").json()[
        "messages"
    ]
    assert "Nada" in messages[-1]["text"] or "No hay nada" in messages[-1]["text"]


def test_another_members_diary_and_bookings_stay_out_whatever_the_model_asks(
    client, agent, model
):
    """A model that names another member's ids, or a member argument the tools do
    not have, reads and changes nothing of theirs."""

    today = business_today(business=agent.business)
    other = Member.objects.get(external_id="socio-1001")
    entry = MealEntry.objects.create(
        business=agent.business,
        member=other,
        date=today,
        meal="lunch",
        food=agent.business.foods.first(),
        grams=100,
    )
    session = (
        ClassSession.objects.filter(business=agent.business, starts_at__gt=now())
        .order_by("starts_at")
        .first()
    )
    booking = Booking.objects.create(
        business=agent.business, member=other, session=session
    )
    model(
        Say(
            calls=[
                ("get_meal_diary", {"date": str(today), "member_id": other.pk}),
                ("get_meal_diary", {"date": str(today)}),
                ("list_my_bookings", {"member": other.external_id}),
                ("list_my_bookings", {}),
                ("remove_meal_entry", {"entry_id": entry.pk}),
                ("cancel_booking", {"booking_id": booking.pk}),
            ]
        ),
        Say(text="Hecho."),
    )
    started = start(client, agent, identity_token=identity(agent, sub="socio-1002"))
    assert send(client, started, "hola").status_code == 200

    results = Message.objects.get(role="tool_results").content["results"]
    assert [r["status"] for r in results] == [
        "invalid_arguments",  # no tool takes a member
        "no_results",  # this member's diary: empty, though 1001's has an entry
        "invalid_arguments",
        "no_results",  # this member's bookings: none, though 1001 has one
        "not_found",  # 1001's entry and booking are not this member's
        "not_found",
    ]
    read = json.dumps([r["payload"] for r in results])
    assert f'"entry_id": {entry.pk}' not in read
    assert f'"booking_id": {booking.pk}' not in read
    assert MealEntry.objects.filter(pk=entry.pk).exists()
    booking.refresh_from_db()
    assert booking.status == "confirmed"


def test_when_the_model_cannot_be_reached_the_turn_still_answers(client, agent, model):
    down = ProviderError("unavailable", "down", retry_after=0)
    model(*[Say(error=down)] * 3)
    response = send(client, start(client, agent), "hola")
    assert response.status_code == 200
    messages = response.json()["messages"]
    assert [m["role"] for m in messages] == ["member", "notice"]
    assert Message.objects.filter(role="member", text="hola").exists()


def test_a_food_that_is_not_in_the_catalog_is_said_so(client, agent):
    reply = send(
        client, start(client, agent), "¿Cuántas calorías tiene el caviar?"
    ).json()
    text = reply["messages"][-1]["text"]
    assert "No he encontrado ningún alimento que coincida con «caviar»" in text
    assert not any(ch.isdigit() for ch in text)


def test_an_unavailable_catalog_is_said_so_without_figures(client, agent):
    from tools.integrations.faults import Fault, inject_fault

    with inject_fault("nutrition", Fault.UNAVAILABLE):
        reply = send(
            client, start(client, agent), "¿Cuántos carbohidratos tiene el arroz?"
        ).json()
    text = reply["messages"][-1]["text"]
    assert "No puedo consultar el catálogo de alimentos ahora mismo" in text
    assert "28" not in text and "Arroz blanco" not in text


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


def test_a_case_handed_to_staff_is_told_in_a_notice(client, agent):
    """Asking for a person hands the case over; besides the model's reply, a fixed
    notice says so, before the reply, so the member sees it as handed over."""
    from tools.models import Handoff

    started = start(client, agent)

    response = send(client, started, "Quiero hablar con una persona, por favor")

    messages = response.json()["messages"]
    assert [m["role"] for m in messages] == ["member", "notice", "assistant"]
    assert messages[1]["text"] == (
        "Una persona del equipo del gimnasio revisará esta conversación y te "
        "responderá aquí."
    )
    assert Handoff.objects.count() == 1


def test_no_handoff_notice_when_nothing_was_handed_over(client, agent):
    started = start(client, agent)

    messages = send(client, started, "¿Cuántos carbohidratos tiene el arroz?").json()[
        "messages"
    ]

    assert [m["role"] for m in messages] == ["member", "assistant"]
