"""Signed webhooks: the gym's own tools (Slack, Teams, a CRM) hear of events.

The path of one event to one endpoint:

1. ``webhook_deliveries_create``, in the transaction that records the event,
   writes a delivery for each active endpoint of the gym that wants its type and
   sends each one's task after the commit (a broker that is down then loses
   nothing: ``webhook_deliveries_sweep`` sends again what never started, and
   what missed its retry).
2. ``webhook_delivery_attempt`` (the task ``approvals.deliver_webhook``) makes
   one try: nothing when the delivery is settled or its next try is not due; the
   address is resolved and judged (only the public internet, unless
   ``WEBHOOK_ALLOW_PRIVATE``), else the delivery is refused, nothing sent; the try
   is claimed with a compare-and-set on the number of tries, so two messages of
   one delivery never send the same try; then the body is POSTed, signed, to
   the address just judged (not resolved again: a name cannot change its mind
   between the check and the connection).
3. A 2xx delivers it, for good. Anything else is retried after
   ``WEBHOOK_RETRY_DELAYS[tries - 1]`` seconds, until ``1 + len(delays)`` tries
   (eight over about an hour); then it is given up.

Delivery is at least once: a receiver that answered 2xx after the worker
stopped, or whose answer was lost, hears of the event again. Receivers
deduplicate by the body's ``id`` (the event's). The signing secret and what a
receiver answers are never logged nor stored: only the status code and our own
words.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from approvals.models import Event, WebhookDelivery, WebhookEndpoint
from tools.crypto import CannotDecrypt, decrypt, masked
from tools.integrations.addresses import address_public, host_addresses

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "Gymnasia-Signature"
SECRET_MIN_LENGTH = 32
TIMEOUT_SECONDS = 10
CONNECT_TIMEOUT_SECONDS = 3
#: A name's addresses tried in turn when one refuses the connection.
ADDRESSES_TRIED = 4
#: A delivery whose message has not started it by then is sent again.
LOST_AFTER = datetime.timedelta(minutes=2)
#: How early a retry may run (the clocks of two machines differ a little).
CLOCK_SLACK = datetime.timedelta(seconds=1)

Status = WebhookDelivery.Status

# What the delivery log says, in our own words (translated when shown).
NOT_HTTPS = gettext_noop("Webhooks go to https:// addresses only.")
NOT_PUBLIC = gettext_noop(
    "The address leads to a private, loopback or link-local network, where "
    "webhooks may not go."
)
NOT_AN_ADDRESS = gettext_noop("This is not a web address.")
NO_NAME = gettext_noop("The address's name does not resolve.")
ANSWERED = gettext_noop("The receiver answered %(status)s.")
NO_ANSWER = gettext_noop("No answer within 10 seconds.")
NOT_CONNECTED = gettext_noop("Could not connect.")
BROKE = gettext_noop("The connection broke before an answer.")
SWITCHED_OFF = gettext_noop("Not sent: the endpoint was switched off.")
NO_SECRET = gettext_noop(
    "Not sent: the signing secret cannot be read with this installation's keys."
)
LOST = gettext_noop("The last try's outcome was not recorded: its worker stopped.")


class DestinationRefused(Exception):
    """Webhooks may not go to this address; ``reason`` is one of our messages."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Destination:
    """An endpoint's address and the IP addresses it was judged by."""

    url: httpx.URL
    addresses: list[str]


@dataclass(frozen=True)
class Attempt:
    """What one run of the task did: the delivery's status after it (or why it
    did nothing: ``missing``, ``not_due``, ``taken``), and in how many seconds
    the next try is due, when there is one."""

    status: str
    retry_in: int | None = None


def webhook_destination(url: str) -> Destination:
    """Where a webhook to ``url`` may go: raises ``DestinationRefused`` for an
    address off the public internet or not https (both allowed under
    ``WEBHOOK_ALLOW_PRIVATE``), ``OSError`` when the name resolves to nothing."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise DestinationRefused(NOT_AN_ADDRESS) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise DestinationRefused(NOT_AN_ADDRESS)
    allow_private = settings.WEBHOOK_ALLOW_PRIVATE
    if parsed.scheme != "https" and not allow_private:
        raise DestinationRefused(NOT_HTTPS)
    addresses = host_addresses(parsed.host, parsed.port)
    if not addresses:
        raise OSError("the name resolves to nothing")
    if not allow_private and not all(address_public(a) for a in addresses):
        raise DestinationRefused(NOT_PUBLIC)
    return Destination(url=parsed, addresses=addresses)


def webhook_url_problem(url: str) -> str | None:
    """Why an owner may not save this endpoint address, in the reader's
    language; ``None`` when webhooks may go there."""
    try:
        webhook_destination(url)
    except DestinationRefused as refused:
        return gettext(refused.reason)
    except OSError:
        return gettext(NO_NAME)
    return None


def webhook_secret_problem(secret: str) -> str | None:
    """Why a signing secret is too weak, or ``None``."""
    if len(secret) < SECRET_MIN_LENGTH:
        return gettext("The signing secret needs at least %(count)s characters.") % {
            "count": SECRET_MIN_LENGTH
        }
    return None


def webhook_url_masked(url: str) -> str:
    """What lists show of an endpoint's address, which may be a credential
    itself (Slack's carries one in its path): its scheme, host and last four
    characters."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return "••••"
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    port = f":{parsed.port}" if parsed.port else ""
    start = f"{parsed.scheme}://{host}{port}/"
    rest = parsed.raw_path.decode("ascii").lstrip("/")  # the path and the query
    return f"{start}…{rest[-4:]}" if rest else start


def webhook_secret_masked(endpoint: WebhookEndpoint) -> str:
    """What a page may show of an endpoint's signing secret."""
    try:
        return masked(decrypt(endpoint.secret_encrypted))
    except CannotDecrypt:
        return gettext("(cannot be read)")


def webhook_delivery_problem(delivery: WebhookDelivery) -> str:
    """The delivery's last problem in the reader's language."""
    code = delivery.last_status_code
    if code is not None and delivery.last_error == ANSWERED % {"status": code}:
        return gettext(ANSWERED) % {"status": code}
    return gettext(delivery.last_error) if delivery.last_error else ""


def webhook_body(event: Event) -> bytes:
    """The JSON every endpoint receives for ``event``, compact and with sorted
    keys: the same bytes at every try."""
    payload = {
        "id": str(event.id),
        "type": event.type,
        "created_at": event.created_at.isoformat(),
        "business": event.business.slug,
        "data": event.data,
    }
    return json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()


def webhook_signature(*, secret: str, body: bytes, timestamp: int) -> str:
    """The ``Gymnasia-Signature`` header: ``t=<unix time>,v1=<hex HMAC-SHA256 of
    "<t>.<body>">`` with the endpoint's secret (as Stripe signs its events)."""
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def webhook_deliveries_create(*, event: Event) -> int:
    """Write a delivery of ``event`` for each active endpoint of its gym that
    hears of its type (an endpoint with no types hears of all), and send each
    one's task once the caller's transaction commits. Returns how many."""
    endpoints = [
        endpoint
        for endpoint in WebhookEndpoint.objects.filter(
            business_id=event.business_id, active=True
        )
        if not endpoint.events or event.type in endpoint.events
    ]
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(business_id=event.business_id, endpoint=endpoint, event=event)
        for endpoint in endpoints
    )
    for delivery in deliveries:
        _send_after_commit(delivery.pk)
    return len(deliveries)


def _send_after_commit(delivery_id: Any) -> None:
    from approvals.tasks import deliver_webhook

    transaction.on_commit(
        lambda: deliver_webhook.delay(str(delivery_id)),
        robust=True,  # a broker that is down does not undo the event
    )


def _tries_allowed() -> int:
    return 1 + len(settings.WEBHOOK_RETRY_DELAYS)


def webhook_deliveries_sweep(*, now: datetime.datetime | None = None) -> int:
    """Send again the deliveries whose message was lost: never started two
    minutes after they were written, or a retry two minutes late (the broker
    was down, or the worker stopped between a try and sending its retry). A
    last try whose worker stopped before it was recorded is given up. Returns
    how many were sent again."""
    now = now or timezone.now()
    delays = list(settings.WEBHOOK_RETRY_DELAYS)
    pending = WebhookDelivery.objects.filter(status=Status.PENDING)
    late = [
        (tries, now - LOST_AFTER - datetime.timedelta(seconds=delay))
        for tries, delay in enumerate(delays, start=1)
    ]
    lost = pending.filter(attempts=0, created_at__lte=now - LOST_AFTER)
    for tries, before in late:
        lost |= pending.filter(attempts=tries, last_attempt_at__lte=before)
    resent = [str(pk) for pk in lost.values_list("pk", flat=True)[:500]]
    for delivery_id in resent:
        _send_after_commit(delivery_id)
    # No try outlasts its task's time limit.
    limit = datetime.timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    last_try_over = now - LOST_AFTER - limit
    pending.filter(
        attempts__gte=_tries_allowed(), last_attempt_at__lte=last_try_over
    ).update(status=Status.FAILED, last_error=LOST)
    return len(resent)


def webhook_delivery_attempt(*, delivery_id: Any) -> Attempt:
    """Make the next try of one delivery, if it is due and nobody else makes it
    (see the module's docstring). At least once: a receiver deduplicates by the
    event's id."""
    delivery = (
        WebhookDelivery.objects.select_related("endpoint", "event__business")
        .filter(pk=delivery_id)
        .first()
    )
    if delivery is None:
        return Attempt("missing")
    if delivery.status != Status.PENDING:
        return Attempt(delivery.status)  # settled: a message delivered again
    delays = list(settings.WEBHOOK_RETRY_DELAYS)
    tries = delivery.attempts
    if tries >= _tries_allowed():
        return Attempt("taken")  # its last try is under way (or was lost: the sweep)
    now = timezone.now()
    if tries and delivery.last_attempt_at is not None:
        due = delivery.last_attempt_at + datetime.timedelta(seconds=delays[tries - 1])
        if now < due - CLOCK_SLACK:
            return Attempt("not_due")  # an early copy: the retry's own message comes
    this_try = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=Status.PENDING, attempts=tries
    )
    endpoint = delivery.endpoint
    if not endpoint.active:
        return _settle(this_try, Status.FAILED, SWITCHED_OFF)
    try:
        secret = decrypt(endpoint.secret_encrypted)
    except CannotDecrypt:
        return _settle(this_try, Status.FAILED, NO_SECRET)
    destination: Destination | None = None
    problem = ""
    try:
        destination = webhook_destination(endpoint.url)
    except DestinationRefused as refused:
        return _settle(this_try, Status.REFUSED, refused.reason)
    except OSError:
        problem = NO_NAME  # a failed try, retried: names come back
    if not this_try.update(attempts=tries + 1, last_attempt_at=now):
        return Attempt("taken")  # another message claimed this try first
    code: int | None = None
    if destination is not None:
        code, problem = _post(destination, webhook_body(delivery.event), secret)
    made = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=Status.PENDING, attempts=tries + 1
    )
    if code is not None and 200 <= code < 300:
        made.update(
            status=Status.DELIVERED,
            last_status_code=code,
            last_error="",
            delivered_at=timezone.now(),
        )
        return Attempt(Status.DELIVERED)
    last = tries + 1 >= _tries_allowed()
    made.update(
        status=Status.FAILED if last else Status.PENDING,
        last_status_code=code,
        last_error=problem,
    )
    logger.info("Webhook delivery %s, try %s: %s", delivery.pk, tries + 1, problem)
    if last:
        return Attempt(Status.FAILED)
    return Attempt(Status.PENDING, retry_in=int(delays[tries]))


def _settle(this_try: Any, status: str, problem: str) -> Attempt:
    """End a delivery without sending it (unless another message moved it)."""
    this_try.update(status=status, last_error=problem)
    return Attempt(status)


def _post(destination: Destination, body: bytes, secret: str) -> tuple[int | None, str]:
    """POST ``body`` signed to the destination's judged addresses in turn (the
    next only when one refuses the connection): the status code and, unless it
    is a 2xx, our words for what went wrong. Nothing the receiver says is read."""
    url = destination.url
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Gymnasia-Webhooks/1",
        "Host": url.netloc.decode("ascii"),
        SIGNATURE_HEADER: webhook_signature(
            secret=secret, body=body, timestamp=int(time.time())
        ),
    }
    timeout = httpx.Timeout(TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS)
    # trust_env off: no proxy from the environment; the address judged is the
    # one connected to.
    with httpx.Client(
        timeout=timeout, follow_redirects=False, trust_env=False
    ) as client:
        for address in destination.addresses[:ADDRESSES_TRIED]:
            request = client.build_request(
                "POST",
                url.copy_with(host=address),
                content=body,
                headers=headers,
                extensions={"sni_hostname": url.host},
            )
            try:
                response = client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                continue
            except httpx.TimeoutException:
                return None, NO_ANSWER
            except httpx.TransportError:
                return None, BROKE
            response.close()
            code = response.status_code
            return code, "" if 200 <= code < 300 else ANSWERED % {"status": code}
    return None, NOT_CONNECTED
