"""Owners configure their assistant in admin; bad input changes nothing."""

from __future__ import annotations

import contextlib
import http.server
import re
import secrets
import threading
from collections.abc import Iterator
from io import StringIO

import pytest
from django.core.management import call_command
from django.http import HttpRequest

from agents.models import Agent
from tests.admin_forms import form_data, inline_prefix_for
from tests.fakes.stripe_server import running_fake_stripe
from tools.models import AgentToolSetting, Integration
from tools.registry import published_registry
from tools.selection import offered_tools
from tools.services import integration_credentials_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(client):
    out = StringIO()
    call_command("seed_demo", stdout=out)
    _, username, password = out.getvalue().splitlines()[0].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)
    return client


def panel_row(html: str, tool: str) -> str:
    match = re.search(rf'<tr data-tool="{tool}">(.*?)</tr>', html, re.S)
    assert match, tool
    return re.sub(r"<[^>]+>", "|", match.group(1))


def agent_page(client) -> tuple[str, str]:
    agent = Agent.objects.get()
    url = f"/admin/agents/agent/{agent.pk}/change/"
    return url, client.get(url).content.decode()


def test_owner_connects_stripe_and_gates_a_tool_and_the_panel_follows(demo, settings):
    settings.LANGUAGE_CODE = "en"
    url, page = agent_page(demo)
    assert "hidden: integration not connected" in panel_row(page, "refund_payment")
    assert "offered (automatic)" in panel_row(page, "book_class")
    assert "hidden: needs a verified member" in panel_row(page, "book_class")

    key = "sk_test_" + secrets.token_hex(12)
    with running_fake_stripe(key) as fake:
        stripe = Integration.objects.get(kind="stripe")
        stripe_url = f"/admin/tools/integration/{stripe.pk}/change/"
        data = form_data(demo.get(stripe_url).content.decode(), "integration_form")
        data.update(secret_key=key, base_url=fake.base_url, timeout_seconds="2")
        response = demo.post(stripe_url, data)
        assert response.status_code == 302, response.content.decode()[:2000]
    stripe.refresh_from_db()
    assert (stripe.status, stripe.credentials_hint) == ("connected", f"••••{key[-4:]}")
    _, page = agent_page(demo)
    assert "offered (needs approval)" in panel_row(page, "refund_payment")

    data = form_data(page, "agent_form")
    prefix = inline_prefix_for(data, "tool_name", "book_class")
    data[f"{prefix}-mode"] = "gated"
    response = demo.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert AgentToolSetting.objects.get(tool_name="book_class").mode == "gated"
    _, page = agent_page(demo)
    assert "offered (needs approval)" in panel_row(page, "book_class")


def test_the_inline_lists_every_tool_even_unconfigured_ones(demo):
    AgentToolSetting.objects.filter(tool_name="cancel_booking").delete()
    _, page = agent_page(demo)
    data = form_data(page, "agent_form")
    names = {
        v
        for k, v in data.items()
        if k.endswith("-tool_name") and "__prefix__" not in k  # the empty form's
    }
    assert names == set(published_registry().names())


def test_each_tool_settings_control_is_labelled_with_its_tool(demo, settings):
    """Every control of a tool's row has a label naming the column and the tool,
    configured or not, so a screen reader says which tool it sets."""
    settings.LANGUAGE_CODE = "es"
    AgentToolSetting.objects.filter(tool_name="cancel_booking").delete()
    _, page = agent_page(demo)
    data = form_data(page, "agent_form")
    labels = dict(
        re.findall(
            r'<label class="visually-hidden" for="id_([^"]+)">([^<]*)</label>', page
        )
    )
    freeze = inline_prefix_for(data, "tool_name", "freeze_membership")
    cancel = inline_prefix_for(data, "tool_name", "cancel_booking")

    assert labels[f"{freeze}-mode"] == "Modo: Congelar la cuota"
    assert labels[f"{freeze}-enabled"] == "Activa: Congelar la cuota"
    assert labels[f"{cancel}-mode"] == "Modo: Cancelar una reserva de clase"
    for prefix in (freeze, cancel):  # cancel_booking has no row saved
        title = labels[f"{prefix}-mode"].split(": ")[1]
        for name in ("enabled", "auto_limit", "max_amount", "approval_valid_minutes"):
            assert labels[f"{prefix}-{name}"].endswith(f": {title}")


def test_each_row_shows_its_tool_as_text_not_a_control(demo, settings):
    """The tool of a row is words («Congelar la cuota», ``freeze_membership``)
    and a hidden field, never a select that could swap which tool it sets."""
    settings.LANGUAGE_CODE = "es"
    _, page = agent_page(demo)
    data = form_data(page, "agent_form")
    freeze = inline_prefix_for(data, "tool_name", "freeze_membership")

    assert f'<select name="{freeze}-tool_name"' not in page
    assert f'type="hidden" name="{freeze}-tool_name" value="freeze_membership"' in page
    assert (
        "<p><strong>Congelar la cuota</strong><br><code>freeze_membership</code></p>"
        in page
    )


def test_a_saved_row_keeps_its_tool_whatever_is_posted(demo, row_counts):
    """A forged post cannot turn the freeze's row into another tool's."""
    url, page = agent_page(demo)
    data = form_data(page, "agent_form")
    freeze = inline_prefix_for(data, "tool_name", "freeze_membership")
    data[f"{freeze}-tool_name"] = "search_foods"
    data[f"{freeze}-mode"] = "auto"
    before = row_counts()

    response = demo.post(url, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    assert AgentToolSetting.objects.get(tool_name="freeze_membership").mode == "auto"
    assert AgentToolSetting.objects.filter(tool_name="search_foods").count() == 1
    assert row_counts() == before


def test_short_headings_carry_their_help(demo, settings):
    settings.LANGUAGE_CODE = "en"
    _, page = agent_page(demo)
    heading = page.split('<th class="column-approval_valid_minutes')[1].split("</th>")[
        0
    ]

    assert "Valid (min)" in heading
    assert 'title="Minutes a request waits for staff&#x27;s decision' in heading


def post_changes(client, url, form_id, changes):
    data = form_data(client.get(url).content.decode(), form_id)
    data.update(changes)
    return client.post(url, data)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"secret_key": "sk_live_has spaces in it"}, "no spaces"),
        ({"secret_key": "pk_test_abcdefghijklmnop"}, "sk_live_"),
        ({"kind": "paypal"}, "Select a valid choice"),
    ],
)
def test_bad_integration_input_is_a_form_error_and_saves_nothing(
    demo, row_counts, changes, message, settings
):
    settings.LANGUAGE_CODE = "en"
    stripe = Integration.objects.get(kind="stripe")
    url = f"/admin/tools/integration/{stripe.pk}/change/"
    before = row_counts()
    response = post_changes(demo, url, "integration_form", changes)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert row_counts() == before
    stripe.refresh_from_db()
    assert (stripe.credentials_encrypted, stripe.status) == ("", "disconnected")


@pytest.mark.parametrize("limit", ["-5", "lots"])
def test_bad_limit_is_a_form_error_and_saves_nothing(demo, limit, settings):
    settings.LANGUAGE_CODE = "en"
    url, page = agent_page(demo)
    data = form_data(page, "agent_form")
    prefix = inline_prefix_for(data, "tool_name", "refund_payment")
    data[f"{prefix}-auto_limit"] = limit
    data[f"{prefix}-mode"] = "auto"
    response = demo.post(url, data)
    assert response.status_code == 200
    setting = AgentToolSetting.objects.get(tool_name="refund_payment")
    assert (setting.auto_limit, setting.mode) == (None, "gated")


def test_an_approval_valid_for_no_time_is_a_form_error_and_saves_nothing(
    demo, settings, row_counts
):
    """A request cannot wait zero minutes for staff: 0 was saved, and the
    requests then waited a whole day (the default), which the owner never set."""
    settings.LANGUAGE_CODE = "en"
    url, page = agent_page(demo)
    data = form_data(page, "agent_form")
    prefix = inline_prefix_for(data, "tool_name", "freeze_membership")
    data[f"{prefix}-approval_valid_minutes"] = "0"
    before = row_counts()

    response = demo.post(url, data)

    assert response.status_code == 200
    assert "greater than or equal to 1" in response.content.decode()
    assert row_counts() == before
    setting = AgentToolSetting.objects.get(tool_name="freeze_membership")
    assert setting.approval_valid_minutes == 24 * 60


def test_provider_without_key_is_a_form_error_and_saves_nothing(demo, settings):
    settings.LANGUAGE_CODE = "en"
    settings.OPENAI_API_KEY = ""
    url, page = agent_page(demo)
    data = form_data(page, "agent_form")
    data.update(provider="openai", name="Renamed")
    response = demo.post(url, data)
    assert response.status_code == 200
    assert "OPENAI_API_KEY" in response.content.decode()
    agent = Agent.objects.get()
    assert (agent.provider, agent.name) == ("offline", "Asistente de Gymnasia Demo")


def test_staff_read_agents_but_cannot_change_them(client):
    out = StringIO()
    call_command("seed_demo", stdout=out)
    _, username, password = out.getvalue().splitlines()[1].split(" ")
    client.login(request=HttpRequest(), username=username, password=password)
    agent = Agent.objects.get()
    assert client.get(f"/admin/agents/agent/{agent.pk}/change/").status_code == 200
    response = client.post(f"/admin/agents/agent/{agent.pk}/change/", {"name": "x"})
    assert response.status_code == 403
    assert client.get("/admin/tools/integration/").status_code == 403


@pytest.fixture
def stripe_with_a_key(demo):
    """The demo gym's Stripe integration (not connected) with a key stored, and
    the fake Stripe it points at."""
    key = "sk_test_" + secrets.token_hex(12)
    with running_fake_stripe(key) as fake:
        stripe = Integration.objects.get(kind="stripe")
        stripe.config = {"base_url": fake.base_url, "timeout_seconds": 2}
        stripe.save()
        integration_credentials_set(integration=stripe, secret_key=key)
        yield stripe, fake


def test_test_connection_action_records_the_health_check(
    demo, stripe_with_a_key, settings
):
    settings.LANGUAGE_CODE = "en"
    stripe, fake = stripe_with_a_key
    fake.fail_health = True
    response = demo.post(
        "/admin/tools/integration/",
        {"action": "test_connection", "_selected_action": [stripe.pk]},
        follow=True,
    )
    assert "the connection failed" in response.content.decode()
    stripe.refresh_from_db()
    assert stripe.status == "failing" and stripe.last_checked_at is not None
    fake.fail_health = False
    demo.post(
        "/admin/tools/integration/",
        {"action": "test_connection", "_selected_action": [stripe.pk]},
    )
    stripe.refresh_from_db()
    assert (stripe.status, stripe.last_error) == ("connected", "")


def test_test_connection_leaves_a_stripe_account_the_owner_disconnected_so(
    demo, stripe_with_a_key
):
    """R3's first filter is the owner's: a passing check had connected it again,
    and its tools were offered."""
    stripe, _ = stripe_with_a_key
    assert stripe.status == "disconnected"

    demo.post(
        "/admin/tools/integration/",
        {"action": "test_connection", "_selected_action": [stripe.pk]},
    )

    stripe.refresh_from_db()
    assert (stripe.status, stripe.last_error) == ("disconnected", "")
    assert stripe.last_checked_at is not None
    agent = Agent.objects.get()
    member = agent.business.members.first()
    assert "refund_payment" not in offered_tools(agent, member).offered


def test_switching_a_failing_stripe_account_to_connected_checks_it_first(
    demo, stripe_with_a_key, settings
):
    """A failing integration's tools stay hidden until a check passes: the owner
    setting its status back to connected checks it, and it stays failing while
    Stripe still refuses. (The status was saved as chosen, unchecked, and the
    refund and payment tools were offered to members again.)"""
    settings.LANGUAGE_CODE = "en"
    stripe, fake = stripe_with_a_key
    fake.fail_health = True
    stripe.status = "failing"
    stripe.save(update_fields=["status"])
    url = f"/admin/tools/integration/{stripe.pk}/change/"

    response = post_changes(demo, url, "integration_form", {"status": "connected"})

    assert response.status_code == 302
    assert "the connection failed" in demo.get(response["Location"]).content.decode()
    stripe.refresh_from_db()
    assert stripe.status == "failing"
    _, page = agent_page(demo)
    assert "hidden: integration failing" in panel_row(page, "refund_payment")


class _WebPage(http.server.BaseHTTPRequestHandler):
    """A web server's answer to every address: a page of HTML, not an API's JSON
    (or, with ``status`` 400, an API's refusal in its own words); it counts the
    requests it got."""

    status = 200
    received: list[str] = []

    def do_GET(self) -> None:
        type(self).received.append(self.path)
        if self.status == 400:
            body = b'{"error": {"message": "<b>remote words</b> port 5432 is open"}}'
        else:
            body = b"<!doctype html><title>Stripe</title><p>Welcome</p>"
        self.send_response(self.status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


_SITES: dict[str, list[str]] = {}


def web_site_requests(address: str) -> list[str]:
    """The paths the web site at ``address`` was asked for."""
    return list(_SITES[address])


@contextlib.contextmanager
def web_site(status: int = 200) -> Iterator[str]:
    """The address of a web site on loopback that answers every request with HTML
    (or a refusal, with ``status`` 400)."""
    handler = type("Page", (_WebPage,), {"status": status, "received": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    address = f"http://127.0.0.1:{server.server_port}"
    _SITES[address] = handler.received
    try:
        yield address
    finally:
        server.shutdown()
        server.server_close()


def connect_stripe_at(demo, base_url: str):
    """The demo's Stripe integration saved with a new key and ``base_url``: the
    answer, the integration as stored, and the key."""
    stripe = Integration.objects.get(kind="stripe")
    url = f"/admin/tools/integration/{stripe.pk}/change/"
    key = "sk_test_" + secrets.token_hex(12)
    response = post_changes(
        demo,
        url,
        "integration_form",
        {"secret_key": key, "base_url": base_url, "status": "connected"},
    )
    stripe.refresh_from_db()
    return response, stripe, key


def test_an_api_address_that_is_not_stripes_is_a_failed_check_said_on_the_page(
    demo, settings
):
    """An API address the operator lists that answers with a web page instead of
    Stripe's JSON fails the connection check, which the owner reads in our words
    (it was a server error, and the key pasted was lost)."""
    settings.LANGUAGE_CODE = "en"
    with web_site() as address:
        settings.STRIPE_API_BASES = [*settings.STRIPE_API_BASES, address]
        response, stripe, key = connect_stripe_at(demo, address)

    assert response.status_code == 302
    page = demo.get(response["Location"]).content.decode()
    assert "the connection failed" in page
    assert key not in page
    assert (stripe.status, stripe.credentials_hint) == ("failing", f"••••{key[-4:]}")
    assert stripe.last_error == "The address did not answer as Stripe's API does"


def test_an_api_address_the_operator_does_not_list_is_refused_and_gets_nothing(
    demo, settings, row_counts
):
    """Any owner could point the integration anywhere and have Gymnasia send the
    gym's secret key there ("Test connection" against a listener on loopback
    received it). Only the operator's STRIPE_API_BASES may be chosen."""
    settings.LANGUAGE_CODE = "en"
    before = row_counts()
    with web_site() as address, web_site() as listener:
        response, stripe, _ = connect_stripe_at(demo, f"{address}/anything?x=")
        assert response.status_code == 200
        assert "Select a valid choice" in response.content.decode()
        received = [*web_site_requests(address), *web_site_requests(listener)]

    assert received == []
    assert row_counts() == before
    assert stripe.credentials_hint == ""


def test_a_listed_name_that_resolves_to_loopback_gets_no_key(demo, settings):
    """A name is resolved before the key is sent: one that leads to a loopback,
    private or link-local address is refused, and nothing reaches it. (An
    address listed as a number is the operator's choice: the tests' fakes.)"""
    settings.LANGUAGE_CODE = "en"
    with web_site() as address:
        named = address.replace("127.0.0.1", "localhost")
        settings.STRIPE_API_BASES = [*settings.STRIPE_API_BASES, named]
        response, stripe, _ = connect_stripe_at(demo, named)
        received = web_site_requests(address)

    assert response.status_code == 302
    assert received == []
    assert stripe.status == "failing"
    assert stripe.last_error == (
        "The address is not one this installation allows for Stripe"
    )


def test_what_the_remote_side_says_never_reaches_the_page(demo, settings):
    """The remote error message was shown verbatim in admin."""
    settings.LANGUAGE_CODE = "en"
    with web_site(status=400) as address:
        settings.STRIPE_API_BASES = [*settings.STRIPE_API_BASES, address]
        response, stripe, _ = connect_stripe_at(demo, address)
        assert web_site_requests(address) == ["/v1/balance"]

    page = demo.get(response["Location"]).content.decode()
    assert "remote words" not in page and "5432" not in page
    assert stripe.last_error == "Stripe refused the request."


@pytest.mark.parametrize(
    "origins",
    [
        "https://gym.example; script-src *",
        "https://gym.example/path",
        "gym.example",
        "javascript:alert(1)",
    ],
)
def test_an_allowed_origin_that_is_not_one_is_a_form_error(demo, origins, settings):
    """Only scheme://host[:port] may be listed: nothing else reaches the widget's
    frame policy or CORS, and nothing is saved."""
    settings.LANGUAGE_CODE = "en"
    url, _ = agent_page(demo)
    kept = Agent.objects.get().allowed_origins

    response = post_changes(demo, url, "agent_form", {"allowed_origins": origins})

    assert response.status_code == 200
    assert "is not an origin like https://gym.example" in response.content.decode()
    assert Agent.objects.get().allowed_origins == kept


def test_allowed_origins_are_stored_as_browsers_send_them(demo):
    url, _ = agent_page(demo)

    response = post_changes(
        demo,
        url,
        "agent_form",
        {"allowed_origins": "HTTPS://Gym.Example/\n\n  http://localhost:8000  "},
    )

    assert response.status_code == 302
    assert Agent.objects.get().origins() == [
        "https://gym.example",
        "http://localhost:8000",
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "greater than or equal to 1"),
        ("501", "less than or equal to 500"),
        ("-3", "greater than or equal to 0"),
        ("muchos", "Enter a whole number"),
    ],
)
def test_a_history_window_out_of_bounds_is_a_form_error_and_saves_nothing(
    demo, value, message, settings
):
    settings.LANGUAGE_CODE = "en"
    url, _ = agent_page(demo)

    response = post_changes(demo, url, "agent_form", {"history_turns": value})

    assert response.status_code == 200
    assert message in response.content.decode()
    assert Agent.objects.get().history_turns == 40


def test_the_owner_sets_how_many_turns_the_model_reads(demo):
    url, page = agent_page(demo)
    assert 'name="history_turns"' in page

    response = post_changes(demo, url, "agent_form", {"history_turns": "12"})

    assert response.status_code == 302
    assert Agent.objects.get().history_turns == 12


def test_the_owner_sets_the_longest_step_in_tokens(demo):
    """An agent starts with room for a reasoning model's thinking (8192 tokens a
    step), and the owner can set another length."""
    assert Agent.objects.get().max_output_tokens == 8192
    url, page = agent_page(demo)
    assert 'name="max_output_tokens"' in page

    response = post_changes(demo, url, "agent_form", {"max_output_tokens": "16000"})

    assert response.status_code == 302
    assert Agent.objects.get().max_output_tokens == 16000


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("255", "greater than or equal to 256"),
        ("128001", "less than or equal to 128000"),
        ("mucho", "Enter a whole number"),
    ],
)
def test_a_longest_step_out_of_bounds_is_a_form_error_and_saves_nothing(
    demo, value, message, settings
):
    settings.LANGUAGE_CODE = "en"
    url, _ = agent_page(demo)

    response = post_changes(demo, url, "agent_form", {"max_output_tokens": value})

    assert response.status_code == 200
    assert message in response.content.decode()
    assert Agent.objects.get().max_output_tokens == 8192
