"""The owner's webhook endpoints in admin: the secret stored only encrypted and
never shown, private addresses refused, the delivery log, and each gym's
endpoints seen by its own owner only."""

from __future__ import annotations

import pytest

from approvals.models import WebhookEndpoint
from approvals.webhooks import (
    webhook_delivery_attempt,
)
from tests.approvals.webhook_kit import (
    delivery_to,
    endpoint_at,
    new_secret,
)
from tests.factories import StaffRoleFactory
from tests.fakes.webhook_receiver import running_receiver
from tools.crypto import decrypt


@pytest.fixture
def owner(client, settings):
    settings.LANGUAGE_CODE = "en"
    role = StaffRoleFactory(role="owner")
    client.force_login(role.user)
    client.business = role.business
    return client


ADD_URL = "/admin/approvals/webhookendpoint/add/"
SLACK_LIKE = "https://8.8.8.8/services/T0001/B0002/XyZsecretPath9f3k"


def endpoint_form(owner, **changes) -> dict:
    data = {
        "business": owner.business.pk,
        "description": "Slack #front-desk",
        "url": SLACK_LIKE,
        "events": ["approval.requested", "handoff.opened"],
        "active": "on",
        "secret": new_secret(),
    }
    data.update(changes)
    return data


@pytest.mark.django_db
def test_admin_saves_an_endpoint_with_its_secret_encrypted(owner):
    """An owner adds an endpoint: the types chosen are stored, the secret only
    encrypted."""
    data = endpoint_form(owner)

    response = owner.post(ADD_URL, data)

    assert response.status_code == 302
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.business == owner.business
    assert endpoint.events == ["approval.requested", "handoff.opened"]
    assert data["secret"] not in endpoint.secret_encrypted
    assert decrypt(endpoint.secret_encrypted) == data["secret"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hooks",
        "https://localhost/hooks",
        "https://10.1.2.3/hooks",
        "https://[::1]/hooks",
        "https://169.254.169.254/latest",
        "http://8.8.8.8/hooks",
    ],
)
def test_admin_refuses_a_private_address_and_saves_nothing(owner, url, row_counts):
    """Without WEBHOOK_ALLOW_PRIVATE, an address that is or resolves to
    loopback, private or link-local (or is plain http) is a form error on the
    address; nothing is saved."""
    before = row_counts()

    response = owner.post(ADD_URL, endpoint_form(owner, url=url))

    assert response.status_code == 200
    assert list(response.context["adminform"].form.errors) == ["url"]
    assert row_counts() == before


@pytest.mark.django_db
def test_admin_saves_a_loopback_endpoint_with_webhook_allow_private(
    owner, private_allowed
):
    """WEBHOOK_ALLOW_PRIVATE lets an owner save a loopback http address."""
    response = owner.post(
        ADD_URL, endpoint_form(owner, url="http://127.0.0.1:8123/hooks")
    )

    assert response.status_code == 302
    assert WebhookEndpoint.objects.get().url == "http://127.0.0.1:8123/hooks"


@pytest.mark.django_db
def test_admin_refuses_a_short_secret(owner, row_counts):
    """A signing secret under 32 characters is a form error; nothing saved."""
    before = row_counts()

    response = owner.post(ADD_URL, endpoint_form(owner, secret="x" * 31))

    assert list(response.context["adminform"].form.errors) == ["secret"]
    assert row_counts() == before


@pytest.mark.django_db
def test_admin_empty_address_and_secret_on_edit_keep_the_stored_ones(owner):
    """Both are write-only once saved: left empty, the stored ones stay."""
    secret = new_secret()
    endpoint = endpoint_at(owner.business, SLACK_LIKE, secret)
    url = f"/admin/approvals/webhookendpoint/{endpoint.pk}/change/"

    response = owner.post(
        url, endpoint_form(owner, url="", secret="", description="Renamed")
    )

    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.description, endpoint.url) == ("Renamed", SLACK_LIKE)
    assert decrypt(endpoint.secret_encrypted) == secret


def admin_pages(owner, endpoint: WebhookEndpoint, delivery) -> dict[str, str]:
    pages = {
        "endpoints": "/admin/approvals/webhookendpoint/",
        "endpoint": f"/admin/approvals/webhookendpoint/{endpoint.pk}/change/",
        "deliveries": "/admin/approvals/webhookdelivery/",
        "log": f"/admin/approvals/webhookdelivery/?endpoint__id__exact={endpoint.pk}",
        "delivery": f"/admin/approvals/webhookdelivery/{delivery.pk}/change/",
        "history": f"/admin/approvals/webhookendpoint/{endpoint.pk}/history/",
        "delete": f"/admin/approvals/webhookendpoint/{endpoint.pk}/delete/",
    }
    found = {}
    for name, url in pages.items():
        response = owner.get(url)
        assert response.status_code == 200, name
        found[name] = response.content.decode()
    return found


@pytest.mark.django_db
def test_admin_pages_never_show_the_secret_nor_the_whole_address(owner):
    """The signing secret appears on no page; lists show the address masked
    (scheme, host, last four characters)."""
    data = endpoint_form(owner)
    owner.post(ADD_URL, data)
    endpoint = WebhookEndpoint.objects.get()
    delivery = delivery_to(endpoint)

    pages = admin_pages(owner, endpoint, delivery)
    refused = owner.post(ADD_URL, endpoint_form(owner, url="https://127.0.0.1/x"))
    pages["refused form"] = refused.content.decode()

    for name, html in pages.items():
        assert data["secret"] not in html, name
        assert "XyZsecretPath" not in html, name
    assert "https://8.8.8.8/…9f3k" in pages["endpoints"]


@pytest.mark.django_db
def test_admin_delivery_log_shows_tries_and_the_problem(owner, private_allowed):
    """The owner reads each delivery: event type and id, status, tries, last
    status code and the problem in our words."""
    with running_receiver(500) as receiver:
        endpoint = endpoint_at(owner.business, receiver.url, new_secret())
        delivery = delivery_to(endpoint)
        webhook_delivery_attempt(delivery_id=delivery.pk)

    page = owner.get(
        f"/admin/approvals/webhookdelivery/?endpoint__id__exact={endpoint.pk}"
    ).content.decode()

    assert str(delivery.event_id) in page
    assert "approval.requested" in page
    assert "Being delivered" in page
    assert "The receiver answered 500." in page
    assert "the receiver's own words" not in page


@pytest.mark.django_db
def test_admin_owner_of_another_gym_sees_none_of_its_endpoints(client):
    """Lists are empty and each page of another gym's rows is a 404."""
    theirs = StaffRoleFactory(role="owner").business
    endpoint = endpoint_at(theirs, SLACK_LIKE, new_secret())
    delivery = delivery_to(endpoint)
    client.force_login(StaffRoleFactory(role="owner").user)

    endpoints = client.get("/admin/approvals/webhookendpoint/")
    deliveries = client.get("/admin/approvals/webhookdelivery/")

    assert list(endpoints.context["cl"].result_list) == []
    assert list(deliveries.context["cl"].result_list) == []
    for url in (
        f"/admin/approvals/webhookendpoint/{endpoint.pk}/change/",
        f"/admin/approvals/webhookdelivery/{delivery.pk}/change/",
    ):
        assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_admin_staff_see_neither_endpoints_nor_deliveries(client):
    """An endpoint's address is a credential: staff of the gym get 403."""
    role = StaffRoleFactory(role="staff")
    endpoint = endpoint_at(role.business, SLACK_LIKE, new_secret())
    client.force_login(role.user)

    assert client.get("/admin/approvals/webhookendpoint/").status_code == 403
    assert client.get("/admin/approvals/webhookdelivery/").status_code == 403
    change = f"/admin/approvals/webhookendpoint/{endpoint.pk}/change/"
    assert client.get(change).status_code == 403


@pytest.mark.django_db
def test_admin_owner_elsewhere_and_staff_here_sees_no_endpoint_here(client):
    """Owning one gym does not open the endpoints of a gym where one is staff:
    not in the list, and its page refused."""
    here = StaffRoleFactory(role="staff")
    StaffRoleFactory(role="owner", user=here.user)
    endpoint = endpoint_at(here.business, SLACK_LIKE, new_secret())
    client.force_login(here.user)

    listed = client.get("/admin/approvals/webhookendpoint/")
    page = client.get(f"/admin/approvals/webhookendpoint/{endpoint.pk}/change/")

    assert list(listed.context["cl"].result_list) == []
    assert page.status_code == 403
