"""An owner connects the gym's Stripe account in admin: the key is tried before
it is trusted, only at an address the operator lists, and nothing the remote side
says reaches the page."""

from __future__ import annotations

import contextlib
import http.server
import secrets
import threading
from collections.abc import Iterator

import pytest

from agents.models import Agent
from tests.agents.admin_kit import agent_page, owner_signed_in, panel_row, post_changes
from tests.fakes.stripe_server import running_fake_stripe
from tools.models import Integration
from tools.selection import offered_tools
from tools.services import integration_credentials_set

pytestmark = pytest.mark.django_db
demo = pytest.fixture(owner_signed_in)


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
