"""What the webhook tests share: an endpoint with its secret, an event and its
delivery as the services record them."""

from __future__ import annotations

import secrets

from approvals.models import Event, WebhookDelivery, WebhookEndpoint
from tools.crypto import encrypt


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
