"""Clients of the integrations a business connects.

``client_for(kind, business)`` gives the client a handler uses (the default of
a call's client seam, ``tools.context``); tests give a call clients that
misbehave through that seam, and reach Stripe through a fake server on loopback.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from gymnasia.gyms.models import Business
from tools.crypto import CannotDecrypt, decrypt
from tools.integrations.builtin import BuiltinClient
from tools.integrations.classes import ClassesClient
from tools.integrations.errors import IntegrationUnavailable
from tools.integrations.memberships import MembershipsClient
from tools.integrations.nutrition import NutritionClient
from tools.integrations.stripe import DEFAULT_TIMEOUT_SECONDS, StripeClient

BUILTIN_CLIENTS: dict[str, type[BuiltinClient]] = {
    client.kind: client
    for client in (NutritionClient, ClassesClient, MembershipsClient)
}


def stripe_client(integration: Any) -> StripeClient:
    """The Stripe client of a stored integration, with its decrypted key."""
    try:
        credentials = json.loads(decrypt(integration.credentials_encrypted))
    except (CannotDecrypt, ValueError):
        raise IntegrationUnavailable("the stored Stripe key cannot be read") from None
    config = integration.config or {}
    return StripeClient(
        integration.business,
        secret_key=credentials["secret_key"],
        base_url=config.get("base_url") or settings.STRIPE_API_BASES[0],
        timeout=float(config.get("timeout_seconds") or DEFAULT_TIMEOUT_SECONDS),
    )


def client_for(kind: str, business: Business) -> Any:
    """The client of an integration kind for a business."""
    if kind == StripeClient.kind:
        from tools.models import Integration

        integration = Integration.objects.filter(
            business=business, kind=kind, status=Integration.Status.CONNECTED
        ).first()
        if integration is None or not integration.credentials_encrypted:
            raise IntegrationUnavailable("Stripe is not connected")
        return stripe_client(integration)
    return BUILTIN_CLIENTS[kind](business)
