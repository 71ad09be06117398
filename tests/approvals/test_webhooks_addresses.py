"""Where signed webhooks may go: only HTTPS addresses on the public internet,
judged at each delivery on the address the name resolves to then, and posted
to that very address; loopback only with ``WEBHOOK_ALLOW_PRIVATE``."""

from __future__ import annotations

import pytest

from approvals.tasks import deliver_webhook
from approvals.webhooks import (
    NOT_HTTPS,
    NOT_PUBLIC,
    webhook_delivery_attempt,
)
from tests.approvals.webhook_kit import (
    delivery_to,
    endpoint_at,
    new_secret,
    stored,
)
from tests.factories import BusinessFactory
from tests.fakes.webhook_receiver import running_receiver


@pytest.mark.django_db
@pytest.mark.parametrize(
    "address",
    [
        "https://localhost:{port}/hooks",
        "https://127.0.0.1:{port}/hooks",
        "https://[::1]:{port}/hooks",
        "https://[::ffff:127.0.0.1]:{port}/hooks",
        "https://10.0.0.8/hooks",
        "https://169.254.169.254/latest/meta-data",
    ],
)
def test_a_private_or_loopback_destination_is_refused_at_delivery(
    address, sent, row_counts
):
    """Without WEBHOOK_ALLOW_PRIVATE, a delivery whose address is (or resolves
    to) loopback, private or link-local is refused: nothing connects, no try
    counted, no retry."""
    with running_receiver(200) as receiver:
        delivery = delivery_to(
            endpoint_at(
                BusinessFactory(), address.format(port=receiver.port), new_secret()
            )
        )
        before = row_counts()

        deliver_webhook(str(delivery.pk))

    assert receiver.connections == 0
    assert sent == []
    assert row_counts() == before
    row = stored(delivery)
    assert (row.status, row.attempts, row.last_error) == ("refused", 0, NOT_PUBLIC)


@pytest.mark.django_db
def test_plain_http_is_refused_at_delivery():
    """Without WEBHOOK_ALLOW_PRIVATE, webhooks go over https only."""
    delivery = delivery_to(
        endpoint_at(BusinessFactory(), "http://8.8.8.8/hooks", new_secret())
    )

    webhook_delivery_attempt(delivery_id=delivery.pk)

    assert (stored(delivery).status, stored(delivery).last_error) == (
        "refused",
        NOT_HTTPS,
    )


@pytest.mark.django_db
def test_a_name_that_now_resolves_to_a_private_address_is_refused(monkeypatch):
    """An endpoint saved when its name was public: DNS changed since, and the
    delivery, judging the name again, sends nothing."""
    with running_receiver(200) as receiver:
        delivery = delivery_to(
            endpoint_at(
                BusinessFactory(),
                f"https://hooks.example.test:{receiver.port}/x",
                new_secret(),
            )
        )
        monkeypatch.setattr(
            "approvals.webhooks.host_addresses", lambda host, port=None: ["127.0.0.1"]
        )

        webhook_delivery_attempt(delivery_id=delivery.pk)

    assert receiver.connections == 0
    assert stored(delivery).status == "refused"


@pytest.mark.django_db
def test_the_post_goes_to_the_address_judged_not_resolved_again(
    private_allowed, monkeypatch
):
    """The connection goes to the address the name was judged by, with the
    name in the Host header: a name cannot answer the check with one address
    and the connection with another."""
    judged: list[str] = []

    def resolved(host, port=None):
        judged.append(host)
        return ["127.0.0.1"]

    monkeypatch.setattr("approvals.webhooks.host_addresses", resolved)
    with running_receiver(200) as receiver:
        url = f"http://hooks.example.test:{receiver.port}/x"  # no such name
        delivery = delivery_to(endpoint_at(BusinessFactory(), url, new_secret()))

        webhook_delivery_attempt(delivery_id=delivery.pk)

    assert judged == ["hooks.example.test"]
    [received] = receiver.requests
    assert received.headers["Host"] == f"hooks.example.test:{receiver.port}"
    assert stored(delivery).status == "delivered"


@pytest.mark.django_db
def test_a_loopback_destination_is_allowed_with_webhook_allow_private(
    private_allowed,
):
    """With WEBHOOK_ALLOW_PRIVATE (tests), loopback and plain http are allowed."""
    with running_receiver(200) as receiver:
        url = receiver.url.replace("127.0.0.1", "localhost")
        delivery = delivery_to(endpoint_at(BusinessFactory(), url, new_secret()))

        webhook_delivery_attempt(delivery_id=delivery.pk)

    assert len(receiver.requests) == 1
    assert stored(delivery).status == "delivered"
