"""The owner connects an agent's WhatsApp number in admin: the secrets are
stored encrypted and never shown, the page gives the webhook's address, and the
test reads the number from Meta or says plainly what failed."""

from __future__ import annotations

import io
import logging

import pytest
from django.core.management import call_command
from django.utils import translation

from agents.models import WhatsAppChannel
from agents.whatsapp.graph import Refused
from agents.whatsapp.services import _problem
from tests.admin_forms import form_data
from tests.agents.whatsapp_kit import LUCIA, Turns, connect
from tests.factories import StaffRoleFactory

pytestmark = pytest.mark.django_db
ADD = "/admin/agents/whatsappchannel/add/"


@pytest.fixture
def owner(client, agent):
    user = StaffRoleFactory(business=agent.business, role="owner").user
    client.force_login(user)
    return user


def _add(client, agent, graph, **changes):
    data = form_data(client.get(ADD).content.decode(), "whatsappchannel_form")
    data.update(
        agent=str(agent.pk),
        phone_number_id=graph.phone_number_id,
        business_account_id=graph.waba_id,
        api_base=graph.base_url,
        access_token=graph.access_token,
        app_secret=graph.app_secret,
        verify_token=graph.verify_token,
        template_name="",
        template_language="es",
    )
    data.update(changes)
    return client.post(ADD, data, follow=True)


def test_an_owner_connects_a_number_and_meta_answers(client, agent, graph, owner):
    response = _add(client, agent, graph)

    page = response.content.decode()
    assert "+34 910 00 00 00" in page
    channel = WhatsAppChannel.objects.get()
    assert channel.access_token == graph.access_token
    assert graph.access_token not in channel.access_token_encrypted
    assert channel.display_phone_number == "+34 910 00 00 00"
    assert channel.test_problem == ""
    assert graph.count("GET", f"/{graph.phone_number_id}") == 1


def test_the_change_page_shows_the_webhook_and_no_secret(client, agent, graph, owner):
    channel = connect(agent, graph)

    page = client.get(
        f"/admin/agents/whatsappchannel/{channel.pk}/change/"
    ).content.decode()

    assert f"http://testserver/channels/whatsapp/{agent.public_key}/" in page
    for secret in (graph.access_token, graph.app_secret, graph.verify_token):
        assert secret not in page


def test_a_refused_token_is_said_plainly(client, agent, graph, owner):
    graph.expire_token()

    response = _add(client, agent, graph)

    with translation.override("es"):  # the admin's language here
        said = _problem(Refused("Session has expired.", 190))
    assert said in response.content.decode()
    assert WhatsAppChannel.objects.get().test_problem == said


def test_an_address_not_allowed_is_refused_by_the_form(client, agent, graph, owner):
    response = _add(client, agent, graph, api_base="http://169.254.169.254")

    assert response.status_code == 200
    assert not WhatsAppChannel.objects.exists()


def test_staff_cannot_open_the_channels(client, agent, graph):
    channel = connect(agent, graph)
    client.force_login(StaffRoleFactory(business=agent.business, role="staff").user)

    response = client.get(f"/admin/agents/whatsappchannel/{channel.pk}/change/")

    assert response.status_code in (403, 302, 404)


def test_the_channels_secrets_never_leave_the_app(
    client, agent, graph, owner, caplog, monkeypatch, django_capture_on_commit_callbacks
):
    """R12: after a member's turn, the token, app secret and verify token are in
    no log line, no page, no row but their encrypted columns."""
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "agents", "tools", "django"):
        caplog.set_level(logging.DEBUG, logger=name)
    channel = connect(agent, graph)
    turns = Turns(monkeypatch, django_capture_on_commit_callbacks)
    turns.post(client, agent, graph.inbound_text(LUCIA, "Hola"))
    turns.run()
    assert graph.texts_to(LUCIA)

    dump = io.StringIO()
    call_command("dumpdata", "agents", "tools", "approvals", stdout=dump)
    pages = [
        client.get(url).content.decode()
        for url in (
            "/admin/agents/whatsappchannel/",
            f"/admin/agents/whatsappchannel/{channel.pk}/change/",
            "/admin/agents/conversation/",
        )
    ]
    for secret in (graph.access_token, graph.app_secret, graph.verify_token):
        assert secret not in caplog.text
        assert secret not in dump.getvalue()
        assert all(secret not in page for page in pages)
