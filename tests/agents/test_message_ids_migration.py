"""The migration that gives messages their public ids: every message already
stored gets one of its own, and the API reads from them in order."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.factories import BusinessFactory

BEFORE = [("agents", "0012_panel_indexes")]


def _migrate(targets=None):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    targets = targets or executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_every_stored_message_gets_a_public_id_of_its_own():
    old = _migrate(BEFORE)
    try:
        agent_model = old.get_model("agents", "Agent")
        conversation_model = old.get_model("agents", "Conversation")
        message_model = old.get_model("agents", "Message")
        business = BusinessFactory()
        agent = agent_model.objects.create(
            business_id=business.pk, name="Asistente", public_key="ag_migration"
        )
        conversation = conversation_model.objects.create(
            agent_id=agent.pk, business_id=business.pk, language="es"
        )
        message_model.objects.bulk_create(
            message_model(conversation_id=conversation.pk, role="member", text=f"{n}")
            for n in range(2500)  # more than one batch
        )
    finally:
        new = _migrate()

    ids = list(
        new.get_model("agents", "Message")
        .objects.order_by("pk")
        .values_list("public_id", flat=True)
    )
    assert len(ids) == 2500 and None not in ids
    assert len(set(ids)) == 2500
