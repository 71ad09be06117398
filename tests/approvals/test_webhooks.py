"""Signed webhooks: each event reaches the gym's endpoints signed, at least once,
retried on anything but a 2xx (at most 8 tries), never after one, and never at
an address off the public internet unless ``WEBHOOK_ALLOW_PRIVATE``.

The receiver is a small HTTP server on loopback (``tests.fakes.webhook_receiver``).
The logic of one try is run by calling the task's service directly; delivery and
retries through a real Celery worker on Redis and PostgreSQL, whose settings
(``tests.approvals.webhook_worker_settings``) put retries a second apart.
"""

from __future__ import annotations

import datetime
import json
import secrets
import threading
import time

import pytest
from django.db import connection, transaction
from django.utils import timezone

from approvals.models import Event, WebhookDelivery, WebhookEndpoint
from approvals.tasks import deliver_webhook
from approvals.webhooks import (
    ANSWERED,
    NO_NAME,
    NOT_HTTPS,
    NOT_PUBLIC,
    Destination,
    webhook_body,
    webhook_deliveries_create,
    webhook_deliveries_sweep,
    webhook_delivery_attempt,
)
from tests.approvals.test_worker import wait_for, worker  # noqa: F401
from tests.factories import BusinessFactory, StaffRoleFactory
from tests.fakes.webhook_receiver import running_receiver, signature_valid
from tools.crypto import decrypt, encrypt

WORKER_SETTINGS = "tests.approvals.webhook_worker_settings"


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def endpoint_at(business, url: str, secret: str, **fields) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(
        business=business,
        url=url,
        description=fields.pop("description", "Front desk"),
        secret_encrypted=encrypt(secret),
        **fields,
    )


def event_of(business, type: str = Event.Type.APPROVAL_REQUESTED) -> Event:
    return Event.objects.create(
        business=business,
        type=type,
        data={"request": "r-1", "tool": "freeze_membership", "member_name": "Ana"},
    )


def delivery_to(endpoint: WebhookEndpoint, event: Event | None = None):
    event = event or event_of(endpoint.business)
    return WebhookDelivery.objects.create(
        business=endpoint.business, endpoint=endpoint, event=event
    )


def stored(delivery: WebhookDelivery) -> WebhookDelivery:
    return WebhookDelivery.objects.get(pk=delivery.pk)


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, int | None]]:
    """The task messages webhooks send, recorded instead of sent: (id, countdown)."""
    messages: list[tuple[str, int | None]] = []
    monkeypatch.setattr(
        deliver_webhook, "delay", lambda pk: messages.append((pk, None))
    )
    monkeypatch.setattr(
        deliver_webhook,
        "apply_async",
        lambda args, countdown=None: messages.append((args[0], countdown)),
    )
    return messages


@pytest.fixture
def private_allowed(settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True


# Signing and the body ------------------------------------------------------


@pytest.mark.django_db
def test_signature_verifies_with_the_secret_over_the_exact_body(private_allowed):
    """The receiver checks Gymnasia-Signature with the endpoint's secret against
    the raw body it got; the body is compact JSON naming the event by its id."""
    business = BusinessFactory(slug="gym-norte")
    secret = new_secret()
    with running_receiver(200) as receiver:
        endpoint = endpoint_at(business, receiver.url, secret)
        event = event_of(business)
        delivery = delivery_to(endpoint, event)

        webhook_delivery_attempt(delivery_id=delivery.pk)

    [received] = receiver.requests
    assert received.headers["Content-Type"] == "application/json"
    assert signature_valid(
        received.headers["Gymnasia-Signature"], received.body, secret
    )
    assert not signature_valid(
        received.headers["Gymnasia-Signature"], received.body, new_secret()
    )
    assert received.body == webhook_body(event)
    assert json.loads(received.body) == {
        "id": str(event.id),
        "type": "approval.requested",
        "created_at": event.created_at.isoformat(),
        "business": "gym-norte",
        "data": event.data,
    }
    assert b", " not in received.body and b": " not in received.body


@pytest.mark.django_db
def test_the_signature_time_is_the_time_of_the_try(private_allowed):
    """``t`` is the Unix time of the try, so a receiver can refuse old replays."""
    with running_receiver(200) as receiver:
        delivery = delivery_to(
            endpoint_at(BusinessFactory(), receiver.url, new_secret())
        )
        webhook_delivery_attempt(delivery_id=delivery.pk)

    header = receiver.requests[0].headers["Gymnasia-Signature"]
    t = int(dict(part.split("=", 1) for part in header.split(","))["t"])
    assert abs(t - time.time()) < 5


# Which endpoints hear of an event -----------------------------------------


@pytest.mark.django_db
def test_deliveries_go_to_the_active_endpoints_that_hear_the_type(
    sent, django_capture_on_commit_callbacks
):
    """One delivery per active endpoint of the gym whose events are empty (all)
    or hold the type; each one's task is sent after the commit."""
    business = BusinessFactory()
    everything = endpoint_at(business, "https://a.example/h", new_secret())
    requests = endpoint_at(
        business, "https://b.example/h", new_secret(), events=["approval.requested"]
    )
    endpoint_at(
        business, "https://c.example/h", new_secret(), events=["handoff.opened"]
    )
    endpoint_at(business, "https://d.example/h", new_secret(), active=False)
    endpoint_at(BusinessFactory(), "https://e.example/h", new_secret())

    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            event = event_of(business)
            created = webhook_deliveries_create(event=event)
            assert sent == []  # nothing leaves before the commit

    deliveries = WebhookDelivery.objects.filter(event=event)
    assert created == 2
    assert {d.endpoint_id for d in deliveries} == {everything.pk, requests.pk}
    assert sorted(pk for pk, _ in sent) == sorted(str(d.pk) for d in deliveries)


@pytest.mark.django_db
def test_a_broker_that_is_down_does_not_undo_the_event(
    monkeypatch, django_capture_on_commit_callbacks
):
    """Sending the task fails after the commit; the event and its delivery stay,
    pending, for the sweep to send again."""
    business = BusinessFactory()
    endpoint_at(business, "https://a.example/h", new_secret())

    def broker_down(pk: str) -> None:
        raise ConnectionError("broker down")

    monkeypatch.setattr(deliver_webhook, "delay", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            event = event_of(business)
            webhook_deliveries_create(event=event)

    assert Event.objects.filter(pk=event.pk).count() == 1
    assert WebhookDelivery.objects.get(event=event).status == "pending"


# One try, by the task's service --------------------------------------------


@pytest.mark.django_db
def test_a_2xx_delivers_and_a_message_delivered_again_sends_nothing(
    private_allowed, sent
):
    """After a 2xx the delivery is settled: the same message run again (a
    redelivery) makes no request and schedules no retry."""
    with running_receiver(204) as receiver:
        delivery = delivery_to(
            endpoint_at(BusinessFactory(), receiver.url, new_secret())
        )
        deliver_webhook(str(delivery.pk))
        deliver_webhook(str(delivery.pk))

    assert len(receiver.requests) == 1
    assert sent == []
    row = stored(delivery)
    assert (row.status, row.attempts, row.last_status_code) == ("delivered", 1, 204)
    assert row.delivered_at is not None and row.last_error == ""


@pytest.mark.django_db
def test_a_failed_try_is_retried_after_its_delay(private_allowed, sent, settings):
    """A 500 keeps the delivery pending, says "answered 500" in our words (never
    the receiver's), and sends the task again for WEBHOOK_RETRY_DELAYS[0]."""
    with running_receiver(500) as receiver:
        delivery = delivery_to(
            endpoint_at(BusinessFactory(), receiver.url, new_secret())
        )
        deliver_webhook(str(delivery.pk))

    row = stored(delivery)
    assert (row.status, row.attempts, row.last_status_code) == ("pending", 1, 500)
    assert row.last_error == ANSWERED % {"status": 500}
    assert sent == [(str(delivery.pk), settings.WEBHOOK_RETRY_DELAYS[0])]


@pytest.mark.django_db
def test_each_retry_waits_the_delay_of_its_try(private_allowed, sent, settings):
    """The countdown after try n is WEBHOOK_RETRY_DELAYS[n - 1]."""
    settings.WEBHOOK_RETRY_DELAYS = [0, 0, 7, 0, 0, 0, 0]
    with running_receiver(500) as receiver:
        delivery = delivery_to(
            endpoint_at(BusinessFactory(), receiver.url, new_secret())
        )
        for _ in range(3):
            deliver_webhook(str(delivery.pk))

    assert [countdown for _, countdown in sent] == [0, 0, 7]


@pytest.mark.django_db
def test_at_most_eight_tries_then_given_up(private_allowed, sent, settings):
    """A receiver that always fails gets 1 + len(WEBHOOK_RETRY_DELAYS) = 8
    tries; the eighth gives up and schedules nothing; later messages send
    nothing."""
    settings.WEBHOOK_RETRY_DELAYS = [0] * 7
    with running_receiver(503) as receiver:
        delivery = delivery_to(
            endpoint_at(BusinessFactory(), receiver.url, new_secret())
        )
        for _ in range(12):
            deliver_webhook(str(delivery.pk))

    assert len(receiver.requests) == 8
    assert len(sent) == 7
    row = stored(delivery)
    assert (row.status, row.attempts, row.last_status_code) == ("failed", 8, 503)


@pytest.mark.django_db
def test_an_early_copy_of_a_retry_sends_nothing(private_allowed, sent):
    """A message of the delivery that arrives before the next try is due (a
    copy sent again) does nothing; the retry's own message makes that try."""
    with running_receiver(500) as receiver:
        delivery = delivery_to(
            endpoint_at(BusinessFactory(), receiver.url, new_secret())
        )
        webhook_delivery_attempt(delivery_id=delivery.pk)
        early = webhook_delivery_attempt(delivery_id=delivery.pk)

    assert early.status == "not_due"
    assert len(receiver.requests) == 1
    assert stored(delivery).attempts == 1


@pytest.mark.django_db
def test_no_answer_in_time_is_a_failed_try_in_our_words(private_allowed, monkeypatch):
    """A receiver that does not answer within the timeout: a failed try, told
    as such, no status code."""
    monkeypatch.setattr("approvals.webhooks.TIMEOUT_SECONDS", 0.3)
    monkeypatch.setattr("approvals.webhooks.NO_ANSWER", "No answer in time.")
    with running_receiver(200) as receiver:
        delivery = delivery_to(
            endpoint_at(BusinessFactory(), receiver.url, new_secret())
        )
        slow = threading.Event()
        original = receiver.answer
        receiver.answer = lambda received: (slow.wait(2), original(received))[1]
        attempt = webhook_delivery_attempt(delivery_id=delivery.pk)
        slow.set()

    row = stored(delivery)
    assert attempt.retry_in is not None
    assert (row.status, row.last_status_code, row.last_error) == (
        "pending",
        None,
        "No answer in time.",
    )


@pytest.mark.django_db
def test_a_name_that_does_not_resolve_is_a_failed_try(monkeypatch, sent):
    """DNS may come back: a name that resolves to nothing is a try that failed
    (retried), not a refusal."""

    def nothing(host, port=None):
        raise OSError("no such name")

    monkeypatch.setattr("approvals.webhooks.host_addresses", nothing)
    delivery = delivery_to(
        endpoint_at(BusinessFactory(), "https://hooks.example.test/x", new_secret())
    )

    deliver_webhook(str(delivery.pk))

    row = stored(delivery)
    assert (row.status, row.attempts, row.last_error) == ("pending", 1, NO_NAME)
    assert len(sent) == 1


# Where webhooks may go ----------------------------------------------------


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


# The sweep ------------------------------------------------------------------


@pytest.mark.django_db
def test_the_sweep_sends_again_a_delivery_never_started(
    sent, django_capture_on_commit_callbacks
):
    """Pending with no try two minutes after it was written: its message was
    lost; the sweep sends it again. A newer one is left to its message."""
    endpoint = endpoint_at(BusinessFactory(), "https://a.example/h", new_secret())
    now = timezone.now()
    lost = delivery_to(endpoint)
    WebhookDelivery.objects.filter(pk=lost.pk).update(
        created_at=now - datetime.timedelta(minutes=3)
    )
    delivery_to(endpoint)  # written just now

    with django_capture_on_commit_callbacks(execute=True):
        assert webhook_deliveries_sweep(now=now) == 1
    assert sent == [(str(lost.pk), None)]


@pytest.mark.django_db
def test_the_sweep_sends_again_a_retry_two_minutes_late(
    sent, settings, django_capture_on_commit_callbacks
):
    """A failed try whose retry is more than two minutes overdue (its message
    was lost) is sent again; one still within its delay is not."""
    endpoint = endpoint_at(BusinessFactory(), "https://a.example/h", new_secret())
    now = timezone.now()
    delay = datetime.timedelta(seconds=settings.WEBHOOK_RETRY_DELAYS[1])
    late, waiting = delivery_to(endpoint), delivery_to(endpoint)
    WebhookDelivery.objects.filter(pk=late.pk).update(
        attempts=2, last_attempt_at=now - delay - datetime.timedelta(minutes=3)
    )
    WebhookDelivery.objects.filter(pk=waiting.pk).update(
        attempts=2, last_attempt_at=now - delay + datetime.timedelta(seconds=5)
    )

    with django_capture_on_commit_callbacks(execute=True):
        assert webhook_deliveries_sweep(now=now) == 1
    assert sent == [(str(late.pk), None)]


@pytest.mark.django_db
def test_the_sweep_leaves_settled_deliveries_alone(sent):
    """Delivered, given up or refused deliveries are never sent again."""
    endpoint = endpoint_at(BusinessFactory(), "https://a.example/h", new_secret())
    long_ago = timezone.now() - datetime.timedelta(hours=2)
    for status in ("delivered", "failed", "refused"):
        row = delivery_to(endpoint)
        WebhookDelivery.objects.filter(pk=row.pk).update(
            status=status, created_at=long_ago, last_attempt_at=long_ago, attempts=1
        )

    assert webhook_deliveries_sweep() == 0
    assert sent == []


@pytest.mark.django_db
def test_the_sweep_gives_up_a_last_try_whose_worker_stopped(sent, settings):
    """The eighth try was claimed and never recorded (its worker stopped): once
    no try could still be running, the delivery is given up, not sent."""
    endpoint = endpoint_at(BusinessFactory(), "https://a.example/h", new_secret())
    delivery = delivery_to(endpoint)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=1 + len(settings.WEBHOOK_RETRY_DELAYS),
        last_attempt_at=timezone.now() - datetime.timedelta(minutes=10),
    )

    assert webhook_deliveries_sweep() == 0
    assert stored(delivery).status == "failed"
    assert sent == []


# A race: two messages of one try ----------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_messages_of_one_try_send_it_once(private_allowed, monkeypatch):
    """Two deliveries of the same message read the same try and reach its claim
    together (a barrier); the compare-and-set lets one send."""
    from approvals import webhooks

    barrier = threading.Barrier(2)
    judge = webhooks.webhook_destination

    def judged_together(url: str) -> Destination:
        destination = judge(url)
        barrier.wait(timeout=10)
        return destination

    monkeypatch.setattr(webhooks, "webhook_destination", judged_together)
    outcomes: list[str] = []
    with running_receiver(200) as receiver:
        delivery = delivery_to(
            endpoint_at(BusinessFactory(), receiver.url, new_secret())
        )

        def run() -> None:
            try:
                outcomes.append(
                    webhook_delivery_attempt(delivery_id=delivery.pk).status
                )
            finally:
                connection.close()

        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)

    assert sorted(outcomes) == ["delivered", "taken"]
    assert len(receiver.requests) == 1
    assert stored(delivery).attempts == 1


# Through a real worker -------------------------------------------------------


def start_webhook_worker(worker, monkeypatch) -> None:  # noqa: F811
    """Start the worker with retries a second apart and loopback allowed."""
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", WORKER_SETTINGS)
    monkeypatch.setenv("WEBHOOK_ALLOW_PRIVATE", "1")
    worker.start()


def record_event_with_deliveries(business) -> Event:
    """As the services record an event: in one transaction with its
    deliveries, whose tasks go to the broker on commit."""
    with transaction.atomic():
        event = event_of(business)
        webhook_deliveries_create(event=event)
    return event


def tasks_finished(worker) -> int:  # noqa: F811
    """How many webhook tasks the worker has finished, from its log."""
    log = worker.log.read_text(errors="replace")
    return sum(
        1
        for line in log.splitlines()
        if "approvals.deliver_webhook" in line and "succeeded" in line
    )


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_failing_twice_then_200_gets_the_event_three_times(
    worker,  # noqa: F811
    monkeypatch,
):
    """500, 500, then 200: three POSTs of the same body, and no more."""
    business = BusinessFactory()
    secret = new_secret()
    with running_receiver(500, 500, 200) as receiver:
        endpoint_at(business, receiver.url, secret)
        start_webhook_worker(worker, monkeypatch)

        event = record_event_with_deliveries(business)
        delivery = WebhookDelivery.objects.get(event=event)
        wait_for(lambda: stored(delivery).status == "delivered", 60)
        time.sleep(3)  # three retry delays: nothing more comes

    assert len(receiver.requests) == 3
    assert {r.body for r in receiver.requests} == {webhook_body(event)}
    assert json.loads(receiver.requests[0].body)["id"] == str(event.id)
    assert all(
        signature_valid(r.headers["Gymnasia-Signature"], r.body, secret)
        for r in receiver.requests
    )
    row = stored(delivery)
    assert (row.attempts, row.last_status_code) == (3, 200)


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_never_sends_twice_after_a_2xx(worker, monkeypatch):  # noqa: F811
    """A 200 settles the delivery: its task message delivered twice more makes
    no request."""
    business = BusinessFactory()
    with running_receiver(200) as receiver:
        endpoint_at(business, receiver.url, new_secret())
        start_webhook_worker(worker, monkeypatch)
        event = record_event_with_deliveries(business)
        delivery = WebhookDelivery.objects.get(event=event)
        wait_for(lambda: stored(delivery).status == "delivered", 60)

        deliver_webhook.delay(str(delivery.pk))  # the same message, again
        deliver_webhook.delay(str(delivery.pk))
        wait_for(lambda: tasks_finished(worker) == 3, 60)

    assert len(receiver.requests) == 1
    assert stored(delivery).attempts == 1


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_worker_gives_up_after_eight_tries(worker, monkeypatch):  # noqa: F811
    """A receiver that always answers 500 gets eight tries, then none."""
    business = BusinessFactory()
    with running_receiver(500) as receiver:
        endpoint_at(business, receiver.url, new_secret())
        start_webhook_worker(worker, monkeypatch)
        event = record_event_with_deliveries(business)
        delivery = WebhookDelivery.objects.get(event=event)
        wait_for(lambda: stored(delivery).status == "failed", 90)
        time.sleep(3)

    assert len(receiver.requests) == 8
    assert stored(delivery).attempts == 8


# The admin ---------------------------------------------------------------------


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
