"""An owner connects the gym's Mindbody site in admin: credentials that Mindbody
refuses save nothing and are told in plain words; working ones connect it, the
agent's page names where each tool acts, and no secret is ever shown."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.http import HttpRequest

from agents.models import Agent
from tests.admin_forms import form_data
from tests.tools.mindbody_world import connect_mindbody
from tools.models import Integration
from tools.selection import offered_tools

pytestmark = pytest.mark.django_db

ADD = "/admin/tools/integration/add/"


@pytest.fixture
def owner(client, settings):
    settings.LANGUAGE_CODE = "en"
    out = StringIO()
    call_command("seed_demo", stdout=out)
    _, username, password = out.getvalue().splitlines()[0].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)
    return client


def connect(owner, fake, **changes):
    agent = Agent.objects.get()
    data = form_data(owner.get(ADD).content.decode(), "integration_form")
    data.update(
        business=str(agent.business_id),
        kind="mindbody",
        status="connected",
        mindbody_site_id=fake.site_id,
        mindbody_api_key=fake.api_key,
        mindbody_username=fake.staff_username,
        mindbody_password=fake.staff_password,
        mindbody_base_url=fake.base_url,
        mindbody_serves=["classes", "memberships"],
        member_id_is_client_id="on",
    )
    data.update(changes)
    return owner.post(ADD, data, follow=True)


def panel_row(html: str, tool: str) -> str:
    match = re.search(rf'<tr data-tool="{tool}">(.*?)</tr>', html, re.S)
    assert match, tool
    return re.sub(r"<[^>]+>", "|", match.group(1))


@pytest.mark.parametrize(
    ("changes", "told"),
    [
        ({"mindbody_password": "wrong-password"}, "refused the staff user"),
        ({"mindbody_api_key": "0" * 32}, "refused the API key"),
        ({"mindbody_site_id": "12345"}, "does not know the site id"),
    ],
)
def test_refused_credentials_save_nothing_and_say_why(
    owner, mindbody_settings, row_counts, changes, told
):
    before = row_counts()
    page = connect(owner, mindbody_settings, **changes).content.decode()
    assert "Mindbody did not accept the connection" in page
    assert told in page
    assert "Invalid" not in page and "DeniedAccess" not in page  # not its words
    assert row_counts() == before
    assert mindbody_settings.count("POST", "/usertoken/issue") == 1


def test_credentials_must_come_together(owner, mindbody_settings, row_counts):
    before = row_counts()
    page = connect(owner, mindbody_settings, mindbody_password="").content.decode()
    assert "all four together" in page
    assert row_counts() == before
    assert mindbody_settings.requests == []


def test_working_credentials_connect_and_the_panel_names_the_source(
    owner, mindbody_settings
):
    fake = mindbody_settings
    page = connect(owner, fake).content.decode()
    assert "the connection works" in page
    integration = Integration.objects.get(kind="mindbody")
    assert integration.status == "connected"
    assert integration.config["serves"] == ["classes", "memberships"]
    assert integration.config["member_id_is_client_id"] is True
    agent = Agent.objects.get()
    page = owner.get(f"/admin/agents/agent/{agent.pk}/change/").content.decode()
    assert "the gym&#x27;s Mindbody" in panel_row(page, "book_class")
    assert "Gymnasia (built in)" in panel_row(page, "search_foods")
    freeze = panel_row(page, "freeze_membership")
    assert "Gymnasia (built in)" in freeze and "suspension" in freeze
    change = owner.get(f"/admin/tools/integration/{integration.pk}/change/")
    for secret in (fake.api_key, fake.staff_password, fake.staff_username):
        assert secret not in change.content.decode()
        assert secret not in page
        assert secret not in integration.credentials_encrypted


def test_test_connection_tells_a_missing_permission_and_hides_the_tools(
    owner, mindbody_settings
):
    fake = mindbody_settings
    agent = Agent.objects.get()
    integration = connect_mindbody(agent.business, fake)
    fake.staff_denied = True
    page = owner.post(
        "/admin/tools/integration/",
        {"action": "test_connection", "_selected_action": [integration.pk]},
        follow=True,
    ).content.decode()
    assert "the connection failed" in page and "no permission" in page
    integration.refresh_from_db()
    assert integration.status == "failing"
    member = agent.business.members.first()
    selection = offered_tools(agent, member)
    assert selection.excluded["list_my_bookings"] == "integration_failing"
    assert "search_foods" in selection.offered
    assert "freeze_membership" in selection.offered  # built in, not Mindbody's

    fake.staff_denied = False
    owner.post(
        "/admin/tools/integration/",
        {"action": "test_connection", "_selected_action": [integration.pk]},
    )
    integration.refresh_from_db()
    assert (integration.status, integration.last_error) == ("connected", "")
    assert "list_my_bookings" in offered_tools(agent, member).offered


def test_the_failure_is_told_in_spanish(owner, mindbody_settings, settings):
    settings.LANGUAGE_CODE = "es"
    owner.cookies.load({"django_language": "es"})
    page = connect(
        owner, mindbody_settings, mindbody_password="wrong-password"
    ).content.decode()
    assert "Mindbody no aceptó la conexión" in page
    assert "rechazó el nombre o la contraseña" in page


def test_no_secret_reaches_the_verification_log_pages_or_the_logs(
    owner, mindbody_settings, caplog
):
    """The canaries (the fake's key, password and the tokens it issued) appear in
    no page an owner reads and no log line, even after faults and a handoff."""
    import logging

    from tests.tools.mindbody_world import class_at, client_of
    from tools.dispatcher import CallContext, dispatch_tool_call
    from tools.models import Handoff, ToolCallLog
    from tools.registry import published_registry
    from tools.selection import ToolPolicy
    from tools.types import ToolCall

    caplog.set_level(logging.DEBUG)
    fake = mindbody_settings
    agent = Agent.objects.get()
    connect_mindbody(agent.business, fake)
    member = agent.business.members.get(external_id="socio-1001")
    client_of(fake, member)
    session = class_at(fake, agent.business, days=1, hour=18, name="Spinning")
    fake.fault("POST", "/class/addclienttoclass", "error_500")
    context = CallContext(
        business=agent.business,
        member=member,
        conversation_key="canary",
        offered={t.name: ToolPolicy(mode="auto") for t in published_registry()},
    )
    dispatch_tool_call(
        ToolCall(id="c1", name="book_class", arguments={"session_id": session}),
        context,
    )
    fake.expire_tokens()
    fake.staff_denied = True
    dispatch_tool_call(
        ToolCall(id="c2", name="list_my_bookings", arguments={}), context
    )
    pages = [
        owner.get(url).content.decode()
        for url in (
            f"/admin/tools/toolcalllog/{ToolCallLog.objects.get(provider_call_id='c1').pk}/change/",
            f"/admin/tools/toolcalllog/{ToolCallLog.objects.get(provider_call_id='c2').pk}/change/",
            f"/admin/tools/handoff/{Handoff.objects.get().pk}/change/",
            "/admin/tools/integration/",
            f"/admin/tools/integration/{Integration.objects.get(kind='mindbody').pk}/change/",
            f"/admin/agents/agent/{agent.pk}/change/",
        )
    ]
    tokens = {
        r["headers"]["authorization"].split()[-1]
        for r in fake.requests
        if r["headers"].get("authorization")
    }
    assert tokens
    seen = "\n".join(pages) + caplog.text
    for secret in (fake.api_key, fake.staff_password, *tokens):
        assert secret not in seen


def change(owner, integration, **changes):
    """The integration's change form posted as shown, with ``changes``."""
    url = f"/admin/tools/integration/{integration.pk}/change/"
    data = form_data(owner.get(url).content.decode(), "integration_form")
    data.update(changes)
    return owner.post(url, data, follow=True)


@pytest.fixture
def connected(owner, mindbody_settings):
    agent = Agent.objects.get()
    integration = connect_mindbody(
        agent.business, mindbody_settings, serves=("classes",)
    )
    integration.refresh_from_db()
    return integration


def test_another_address_is_tried_before_it_is_saved(
    owner, mindbody_settings, connected, settings, row_counts
):
    """The stored credentials are refused at another Mindbody address: nothing
    is saved, and the owner is told why in words."""
    from tests.fakes.mindbody_server import running_mindbody

    with running_mindbody() as elsewhere:
        settings.MINDBODY_API_BASES = [
            *settings.MINDBODY_API_BASES,
            elsewhere.base_url,
        ]
        before = row_counts()
        stored = (connected.config, connected.credentials_encrypted, connected.status)
        page = change(
            owner, connected, mindbody_base_url=elsewhere.base_url
        ).content.decode()
        assert "Mindbody did not accept the connection" in page
        assert "refused the API key" in page
        assert elsewhere.count("POST", "/usertoken/issue") == 1  # it was tried
        assert row_counts() == before
        connected.refresh_from_db()
        assert (
            connected.config,
            connected.credentials_encrypted,
            connected.status,
        ) == stored


def test_other_served_kinds_are_tried_before_they_are_saved(
    owner, mindbody_settings, connected, row_counts
):
    fake = mindbody_settings
    fake.staff_denied = True
    before = row_counts()
    page = change(
        owner, connected, mindbody_serves=["classes", "memberships"]
    ).content.decode()
    assert "Mindbody did not accept the connection" in page
    assert "no permission" in page
    assert row_counts() == before
    connected.refresh_from_db()
    assert connected.config["serves"] == ["classes"]

    fake.staff_denied = False
    issued = fake.count("POST", "/usertoken/issue")
    change(owner, connected, mindbody_serves=["classes", "memberships"])
    assert fake.count("POST", "/usertoken/issue") == issued + 1  # tried again
    connected.refresh_from_db()
    assert connected.config["serves"] == ["classes", "memberships"]
    assert connected.status == "connected"


def test_a_change_of_nothing_the_connection_relies_on_is_not_tried(
    owner, mindbody_settings, connected
):
    change(owner, connected, member_id_is_client_id="")
    assert mindbody_settings.requests == []
    connected.refresh_from_db()
    assert connected.config["member_id_is_client_id"] is False


def test_the_country_code_of_national_mobiles_is_kept_and_a_bad_one_refused(
    owner, mindbody_settings, connected, row_counts
):
    before = row_counts()
    stored = dict(connected.config, clients_read_at="2026-12-01T09:00:00+00:00")
    Integration.objects.filter(pk=connected.pk).update(config=stored)

    page = change(owner, connected, mobile_country_code="España").content.decode()

    assert "Write a country code such as 34 or +34." in page
    assert row_counts() == before
    connected.refresh_from_db()
    assert connected.config == stored

    change(owner, connected, mobile_country_code="+34")
    connected.refresh_from_db()
    assert connected.config["mobile_country_code"] == "34"
    # Saved settings: the clients' mobiles are read again from the beginning.
    assert "clients_read_at" not in connected.config
    assert mindbody_settings.requests == []  # nothing the connection relies on
