"""The conversation API v1 answering turns: streamed as DESIGN's events, in the
member's own data only, and honest when the model or the catalog is unavailable
or a case is handed to staff."""

from __future__ import annotations

import json

import pytest
from django.utils.timezone import now

from agents.models import Message
from agents.providers.base import ProviderError
from gymnasia.classes.models import Booking, ClassSession
from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from gymnasia.nutrition.models import MealEntry
from tests.agents.api_client import identity, send, start
from tests.agents.scripted import Say, reply_of

pytestmark = pytest.mark.django_db


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
    # Pablo's diary is empty; Lucía's lunch of today is not his.
    assert messages[-1]["text"] == "Hoy no tienes nada anotado en el diario."


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
    from tests.faults import Fault, inject_fault

    with inject_fault("nutrition", Fault.UNAVAILABLE):
        reply = send(
            client, start(client, agent), "¿Cuántos carbohidratos tiene el arroz?"
        ).json()
    text = reply["messages"][-1]["text"]
    assert "No puedo consultar el catálogo de alimentos ahora mismo" in text
    assert "28" not in text and "Arroz blanco" not in text


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
