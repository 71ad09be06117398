"""A member books and cancels the gym's Mindbody classes through the widget's API:
the real turn, the real harness and the real Mindbody client, a fake Mindbody site
on loopback; only the language model is scripted."""

from __future__ import annotations

import pytest

from gymnasia.gyms.models import Member
from tests.agents.api_client import identity, send, start
from tests.agents.scripted import Say
from tests.tools.mindbody_world import class_at, client_of, connect_mindbody
from tools.models import Handoff, ToolCallLog

pytestmark = pytest.mark.django_db

BOOK = "/class/addclienttoclass"
NOT_DONE = "No he podido hacer el cambio que pediste."


@pytest.fixture
def site(agent, mindbody_settings):
    """The demo gym's classes served by its Mindbody site, where Lucía
    (``socio-1001``) is a client with a pass; and a class tomorrow."""
    fake = mindbody_settings
    connect_mindbody(agent.business, fake, serves=("classes",))
    lucia = Member.objects.get(business=agent.business, external_id="socio-1001")
    fake.lucia = client_of(fake, lucia)
    fake.stranger = str(fake.add_client(client_id="900001", first_name="Otra"))
    fake.session = class_at(fake, agent.business, days=1, hour=18, name="Spinning")
    return fake


def turn(client, agent, started, text, *steps, model):
    model(*steps)
    response = send(client, started, text)
    assert response.status_code == 200
    return response.json()["messages"][-1]["text"]


def test_a_member_books_and_cancels_a_mindbody_class(client, agent, model, site):
    started = start(client, agent, identity_token=identity(agent))
    reply = turn(
        client,
        agent,
        started,
        "Apúntame a spinning mañana",
        Say(calls=[("book_class", {"session_id": site.session})]),
        Say(text="Reservada."),
        model=model,
    )
    assert reply == "Reservada."
    assert site.roster(site.session) == [site.lucia]
    booked = ToolCallLog.objects.get(tool_name="book_class")
    assert (booked.status, booked.verification) == ("ok", "verified")
    booking_id = booked.result["booking"]["booking_id"]

    reply = turn(
        client,
        agent,
        started,
        "Mejor cancélala",
        Say(calls=[("cancel_booking", {"booking_id": booking_id})]),
        Say(text="Cancelada."),
        model=model,
    )
    assert reply == "Cancelada."
    assert site.roster(site.session) == []
    cancelled = ToolCallLog.objects.get(tool_name="cancel_booking")
    assert (cancelled.status, cancelled.verification) == ("ok", "verified")


def test_a_lost_answer_is_read_back_and_booked_once(client, agent, model, site):
    site.fault("POST", BOOK, "lost_after")
    started = start(client, agent, identity_token=identity(agent))
    reply = turn(
        client,
        agent,
        started,
        "Apúntame a spinning",
        Say(calls=[("book_class", {"session_id": site.session})]),
        Say(text="Reservada."),
        model=model,
    )
    assert reply == "Reservada."
    assert site.roster(site.session) == [site.lucia]
    assert site.count("POST", BOOK) == 1
    assert ToolCallLog.objects.get().verification == "verified"
    assert not Handoff.objects.exists()


def test_a_full_class_is_told_in_the_members_words(client, agent, model, site):
    full = class_at(
        site,
        agent.business,
        days=1,
        hour=19,
        name="Yoga",
        capacity=1,
        booked_by=[site.stranger],
    )
    started = start(client, agent, identity_token=identity(agent))
    reply = turn(
        client,
        agent,
        started,
        "Apúntame a yoga",
        Say(calls=[("book_class", {"session_id": full})]),
        Say(text="Listo."),
        model=model,
    )
    assert reply.startswith(NOT_DONE)
    log = ToolCallLog.objects.get()
    assert log.status == "invalid_arguments"
    assert [r["code"] for r in log.result["refusals"]] == ["class_full"]
    assert site.roster(full) == [site.stranger]


def test_an_unpaid_class_is_told_in_the_members_words(client, agent, model, site):
    pablo = Member.objects.get(business=agent.business, external_id="socio-1002")
    client_of(site, pablo, can_pay=False)
    started = start(client, agent, identity_token=identity(agent, sub="socio-1002"))
    reply = turn(
        client,
        agent,
        started,
        "Apúntame a spinning",
        Say(calls=[("book_class", {"session_id": site.session})]),
        Say(text="Listo."),
        model=model,
    )
    assert reply.startswith(NOT_DONE)
    log = ToolCallLog.objects.get()
    assert log.status == "failed"
    assert [r["code"] for r in log.result["refusals"]] == ["class_requires_payment"]
    assert site.roster(site.session) == []


def test_another_clients_booking_id_is_not_found(client, agent, model, site):
    theirs = class_at(
        site, agent.business, days=2, hour=10, name="Pilates", booked_by=[site.stranger]
    )
    [visit] = [v for v in site.visits if v.class_id == theirs]
    started = start(client, agent, identity_token=identity(agent))
    reply = turn(
        client,
        agent,
        started,
        "Cancela la reserva",
        Say(calls=[("cancel_booking", {"booking_id": visit.id})]),
        Say(text="Hecho."),
        model=model,
    )
    assert reply.startswith(NOT_DONE)
    assert ToolCallLog.objects.get().status == "not_found"
    assert site.roster(theirs) == [site.stranger]
