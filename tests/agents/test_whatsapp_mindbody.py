"""A gym whose members live in Mindbody: a client who writes on WhatsApp from the
mobile on her Mindbody record is recognised as the member she is (through the
real webhook, the turn task's function, the fake Graph API and the fake
Mindbody site)."""

from __future__ import annotations

import logging

import pytest
from django.core.cache import cache

from agents.models import Conversation
from gymnasia.gyms.models import Member
from tests.agents.scripted import Say
from tests.fakes.mindbody_server import (  # noqa: F401 (fixtures)
    mindbody_fake,
    mindbody_settings,
)
from tests.tools.mindbody_world import connect_mindbody
from tools.integrations.mindbody.members import mobile_e164
from tools.models import Integration

pytestmark = pytest.mark.django_db

#: The client's mobile as the front desk typed it in Mindbody, and as WhatsApp
#: reports the same number.
DESK_MOBILE = "600 222 333"
WA_ID = "34600222333"


@pytest.fixture(autouse=True)
def _no_recent_read():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def mindbody(agent, mindbody_settings):  # noqa: F811
    """The gym's classes in Mindbody, its members signed with their client id,
    national mobiles read as Spanish."""
    integration = connect_mindbody(agent.business, mindbody_settings)
    integration.config["mobile_country_code"] = "34"
    integration.save()
    return mindbody_settings


def _ask(client, agent, turns, fake, wa_id: str, text: str = "Hola") -> None:
    assert turns.post(client, agent, fake.inbound_text(wa_id, text)).status_code == 200
    assert turns.run() == ["done"]


def _clients_reads(fake) -> list[dict]:
    return [r for r in fake.requests if r["path"].endswith("/client/clients")]


def test_a_mindbody_client_writing_from_her_mobile_is_that_member(
    client, agent, channel, graph, turns, mindbody, model
):
    mindbody.add_client(
        client_id="200300",
        first_name="Marta",
        last_name="Ruiz",
        email="marta@example.com",
        mobile_phone=DESK_MOBILE,
    )
    members = Member.objects.count()
    scripted = model(Say(text="Hola, Marta."))

    _ask(client, agent, turns, graph, WA_ID)

    marta = Member.objects.get(external_id="200300")
    assert Member.objects.count() == members + 1
    assert (marta.name, marta.email, marta.phone) == (
        "Marta Ruiz",
        "marta@example.com",
        "+34600222333",
    )
    assert Conversation.objects.get().member == marta
    offered = {tool.name for tool in scripted.requests[0].tools}
    assert {"list_my_bookings", "book_class"} <= offered
    assert graph.texts_to(WA_ID) == ["Hola, Marta."]


def test_by_email_the_mobile_goes_on_the_one_member_with_it_and_none_is_made(
    client, agent, channel, graph, turns, mindbody, model
):
    config = Integration.objects.get(kind="mindbody").config
    Integration.objects.filter(kind="mindbody").update(
        config={**config, "member_id_is_client_id": False}
    )
    lucia = Member.objects.get(external_id="socio-1001")
    lucia.email = "lucia@example.com"
    lucia.save()
    mindbody.add_client(email="LUCIA@example.com", mobile_phone="+44 7700 900123")
    mindbody.add_client(email="nadie@example.com", mobile_phone="+44 7700 900999")
    members = Member.objects.count()
    model(Say(text="Hola."))

    _ask(client, agent, turns, graph, "447700900123")

    lucia.refresh_from_db()
    assert lucia.phone == "+447700900123"
    assert Member.objects.count() == members
    assert not Member.objects.filter(phone="+447700900999").exists()
    assert Conversation.objects.get().member == lucia


def test_a_national_mobile_without_a_country_code_set_is_not_guessed(
    client, agent, channel, graph, turns, mindbody, model
):
    integration = Integration.objects.get(kind="mindbody")
    del integration.config["mobile_country_code"]
    integration.save()
    mindbody.add_client(client_id="200300", mobile_phone=DESK_MOBILE)
    members = Member.objects.count()
    scripted = model(Say(text="Hola."))

    _ask(client, agent, turns, graph, WA_ID)

    assert Member.objects.count() == members
    assert Conversation.objects.get().member is None
    assert "list_my_bookings" not in {t.name for t in scripted.requests[0].tools}


def test_a_mobile_changed_at_the_desk_is_read_on_a_later_message(
    client, agent, channel, graph, turns, mindbody, model
):
    mindbody.add_client(client_id="200300", mobile_phone="600 999 999")
    model(Say(text="Hola."), Say(text="Hola, Marta."))
    _ask(client, agent, turns, graph, WA_ID)
    assert Conversation.objects.get().member is None
    [first] = _clients_reads(mindbody)
    assert "request.lastModifiedDate" not in first["query"]

    mindbody.client_mobile_changed("200300", DESK_MOBILE)
    cache.clear()  # a minute later
    _ask(client, agent, turns, graph, WA_ID)

    _, later = _clients_reads(mindbody)
    assert later["query"]["request.lastModifiedDate"]
    marta = Member.objects.get(external_id="200300")
    assert marta.phone == "+34600222333"
    assert Conversation.objects.get(member=marta).wa_id == "+" + WA_ID


def test_clients_are_read_at_most_once_a_minute(
    client, agent, channel, graph, turns, mindbody, model
):
    model(Say(text="Hola."), Say(text="Hola."), Say(text="Hola."))

    for number in ("34699000001", "34699000002", "34699000003"):
        _ask(client, agent, turns, graph, number)

    assert len(_clients_reads(mindbody)) == 1


def test_a_mindbody_that_refuses_leaves_the_sender_a_visitor_and_answers(
    client, agent, channel, graph, turns, mindbody, model, caplog
):
    mindbody.add_client(client_id="200300", mobile_phone=DESK_MOBILE)
    mindbody.staff_denied = True
    members = Member.objects.count()
    model(Say(text="Hola."))

    with caplog.at_level(logging.WARNING):
        _ask(client, agent, turns, graph, WA_ID)

    assert Member.objects.count() == members
    assert Conversation.objects.get().member is None
    assert graph.texts_to(WA_ID) == ["Hola."]
    assert Integration.objects.get(kind="mindbody").status == "failing"
    assert "mindbody clients not read" in caplog.text
    assert mindbody.api_key not in caplog.text


def test_a_gym_without_mindbody_reads_nothing(client, agent, channel, graph, turns):
    _ask(client, agent, turns, graph, "34699000001", "¿Horario?")

    assert Conversation.objects.get().member is None


@pytest.mark.parametrize(
    ("written", "country_code", "expected"),
    [
        ("+34 600 111 222", "", "+34600111222"),
        ("0034 600-111-222", "", "+34600111222"),
        ("600 111 222", "34", "+34600111222"),
        ("07700 900123", "44", "+447700900123"),
        ("(212) 555-0100", "1", "+12125550100"),
        ("600 111 222", "", ""),
        ("600 111 222", "034", ""),
        ("ext. 22", "34", ""),
        (None, "34", ""),
    ],
)
def test_a_mobile_in_e164(written, country_code, expected):
    assert mobile_e164(written, country_code) == expected


def test_a_mobile_removed_at_the_desk_no_longer_stands_for_the_member(
    client, agent, channel, graph, turns, mindbody, model
):
    mindbody.add_client(client_id="200300", mobile_phone=DESK_MOBILE)
    model(Say(text="Hola, Marta."), Say(text="Hola."))
    _ask(client, agent, turns, graph, WA_ID)
    assert Conversation.objects.get().member.external_id == "200300"

    mindbody.client_mobile_changed("200300", None)  # the number was given up
    cache.clear()  # a minute later
    _ask(client, agent, turns, graph, WA_ID)

    assert Member.objects.get(external_id="200300").phone == ""
    assert Conversation.objects.filter(member=None).get().wa_id == "+" + WA_ID
