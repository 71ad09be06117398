"""Clients of the integrations a business connects.

``client_for(kind, business)`` gives the client a handler uses (the default of
a call's client seam, ``tools.context``): the built-in domain's, or the client of
the gym's own software where it serves the kind (``tools.integrations.sources``).
Tests give a call clients that misbehave through that seam, and reach Stripe and
Mindbody through fake servers on loopback.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings

from gymnasia.gyms.models import Business
from tools.crypto import CannotDecrypt, decrypt
from tools.integrations.builtin import BuiltinClient
from tools.integrations.classes import ClassesClient
from tools.integrations.errors import IntegrationUnavailable
from tools.integrations.memberships import MembershipsClient
from tools.integrations.mindbody import client as mindbody
from tools.integrations.mindbody.classes import MindbodyClasses
from tools.integrations.mindbody.identity import MindbodyKind
from tools.integrations.mindbody.memberships import MindbodyMemberships
from tools.integrations.nutrition import NutritionClient
from tools.integrations.sources import integration_rows, vendor_serving
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


MINDBODY_CLIENTS: dict[str, type[MindbodyKind]] = {
    client.kind: client for client in (MindbodyClasses, MindbodyMemberships)
}


def mindbody_api(integration: Any) -> mindbody.MindbodyClient:
    """The Mindbody API client of a stored integration, with its credentials."""
    try:
        credentials = json.loads(decrypt(integration.credentials_encrypted))
    except (CannotDecrypt, ValueError):
        raise IntegrationUnavailable(
            "the stored Mindbody credentials cannot be read"
        ) from None
    config = integration.config or {}
    fingerprint = hashlib.sha256(integration.credentials_encrypted.encode())
    return mindbody.MindbodyClient(
        mindbody.Connection(
            integration_id=integration.pk,
            site_id=str(credentials["site_id"]),
            api_key=credentials["api_key"],
            username=credentials["username"],
            password=credentials["password"],
            base_url=config.get("base_url") or settings.MINDBODY_API_BASES[0],
            timeout=float(
                config.get("timeout_seconds") or mindbody.DEFAULT_TIMEOUT_SECONDS
            ),
            fingerprint=fingerprint.hexdigest()[:16],
        )
    )


def _vendor_client(kind: str, business: Business) -> Any | None:
    """The client of the gym's own software serving ``kind``, if one does."""
    from tools.models import Integration

    vendor = Integration.objects.filter(
        business=business, kind=Integration.Kind.MINDBODY
    ).first()
    if vendor is None or vendor_serving(kind, integration_rows([vendor])) is None:
        return None
    if vendor.status != Integration.Status.CONNECTED:
        raise IntegrationUnavailable("Mindbody is failing until tested again")
    if not vendor.credentials_encrypted:
        raise IntegrationUnavailable("Mindbody is not connected")
    return MINDBODY_CLIENTS[kind](
        business,
        api=mindbody_api(vendor),
        member_id_is_client_id=bool(
            (vendor.config or {}).get("member_id_is_client_id")
        ),
    )


def client_for(kind: str, business: Business) -> Any:
    """The client of an integration kind for a business."""
    if kind in MINDBODY_CLIENTS:
        vendor = _vendor_client(kind, business)
        if vendor is not None:
            return vendor
    if kind == StripeClient.kind:
        from tools.models import Integration

        integration = Integration.objects.filter(
            business=business, kind=kind, status=Integration.Status.CONNECTED
        ).first()
        if integration is None or not integration.credentials_encrypted:
            raise IntegrationUnavailable("Stripe is not connected")
        return stripe_client(integration)
    return BUILTIN_CLIENTS[kind](business)
