"""Signed webhooks: each event reaches the gym's endpoints signed, at least once,
retried on anything but a 2xx (at most 8 tries), never after one.

The receiver is a small HTTP server on loopback (``tests.fakes.webhook_receiver``).
The logic of one try is run here by calling the task's service directly; where
webhooks may go is in ``test_webhooks_addresses``, delivery through a real
worker in ``test_webhooks_worker``, the owner's admin in ``test_webhooks_admin``.
"""

from __future__ import annotations

import datetime
import json
import threading
import time

import pytest
from django.db import connection, transaction
from django.utils import timezone

from approvals.models import Event, WebhookDelivery
from approvals.tasks import deliver_webhook
from approvals.webhooks import (
    ANSWERED,
    NO_NAME,
    Destination,
    webhook_body,
    webhook_deliveries_create,
    webhook_deliveries_sweep,
    webhook_delivery_attempt,
)
from tests.approvals.webhook_kit import (
    delivery_to,
    endpoint_at,
    event_of,
    new_secret,
    stored,
)
from tests.factories import BusinessFactory
from tests.fakes.webhook_receiver import running_receiver, signature_valid

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
