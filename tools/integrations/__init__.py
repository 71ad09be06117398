"""Clients of the integrations a business connects.

``client_for(kind, business)`` gives the client a handler uses; tests reach the
same clients through the fault seam in ``faults``.
"""

from __future__ import annotations

from typing import Any

from gymnasia.gyms.models import Business
from tools.integrations.builtin import BuiltinClient
from tools.integrations.classes import ClassesClient
from tools.integrations.faults import FaultyClient, faults_active
from tools.integrations.memberships import MembershipsClient
from tools.integrations.nutrition import NutritionClient

BUILTIN_CLIENTS: dict[str, type[BuiltinClient]] = {
    client.kind: client
    for client in (NutritionClient, ClassesClient, MembershipsClient)
}


def client_for(kind: str, business: Business) -> Any:
    """The client of an integration kind for a business."""
    client = BUILTIN_CLIENTS[kind](business)
    return FaultyClient(client) if faults_active() else client
