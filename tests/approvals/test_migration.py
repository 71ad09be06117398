"""The migration that moved requests onto their calls: a database with pending
actions in every state comes out with waiting calls and staff's decisions, and
nothing lost."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.factories import BusinessFactory, UserFactory

BEFORE = [
    ("approvals", "0005_call_state"),
    ("tools", "0006_call_state"),
    ("gymnasia", "0003_roles_approval_events"),
]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    targets = targets or executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_pending_actions_become_waiting_calls_and_decisions():
    old = _migrate(BEFORE)
    try:
        ToolCallLog = old.get_model("tools", "ToolCallLog")
        PendingAction = old.get_model("approvals", "PendingAction")
        PendingActionEvent = old.get_model("approvals", "PendingActionEvent")
        business = BusinessFactory()
        staff = UserFactory()
        now = timezone.now()
        expires = now + datetime.timedelta(hours=3)

        def request(status, **fields):
            call = ToolCallLog.objects.create(
                business_id=business.pk,
                conversation_key="c",
                tool_name="freeze_membership",
                arguments={"start": "2027-03-01", "end": "2027-03-31"},
                gated=True,
                status={"pending": "pending_approval", "succeeded": "ok"}.get(
                    status, status
                ),
            )
            return PendingAction.objects.create(
                business_id=business.pk,
                conversation_key="c",
                tool_name="freeze_membership",
                arguments=call.arguments,
                action_key=str(call.pk),
                tool_call=call,
                status=status,
                requested_at=now,
                expires_at=expires,
                max_amount=Decimal("20.00"),
                **fields,
            )

        waiting = request("pending")
        rejected = request(
            "rejected", decided_by_id=staff.pk, decided_at=now, decision_reason="no"
        )
        done = request(
            "succeeded", decided_by_id=staff.pk, decided_at=now, finished_at=now
        )
        approved = request("approved", decided_by_id=staff.pk, decided_at=now)
        corrected = request(
            "superseded",
            decided_by_id=staff.pk,
            decided_at=now,
            decision_reason="corrected",
        )
        correction = request("pending")
        PendingActionEvent.objects.create(
            action=corrected,
            kind="superseded",
            actor_id=staff.pk,
            parameters={"by": str(correction.pk), "difference": {"end": ["a", "b"]}},
        )
    finally:
        new = _migrate(None)

    Call = new.get_model("tools", "ToolCallLog")
    Decision = new.get_model("approvals", "Decision")
    calls = {c.pk: c for c in Call.objects.all()}
    assert len(calls) == 6
    for action in (waiting, rejected, done, approved, corrected, correction):
        call = calls[action.tool_call_id]
        assert (call.expires_at, call.max_amount) == (expires, Decimal("20.00"))
    decisions = {d.call_id: d for d in Decision.objects.all()}
    assert set(decisions) == {
        rejected.tool_call_id,
        done.tool_call_id,
        approved.tool_call_id,
        corrected.tool_call_id,
    }
    assert (
        decisions[rejected.tool_call_id].kind,
        decisions[rejected.tool_call_id].reason,
        decisions[rejected.tool_call_id].decided_by_id,
    ) == ("rejected", "no", staff.pk)
    # Told already: the task or the sweep must not tell it again.
    assert decisions[done.tool_call_id].kind == "approved"
    assert decisions[done.tool_call_id].told_at == now
    # Not told yet: the sweep will run or tell it.
    assert decisions[approved.tool_call_id].told_at is None
    fixed = decisions[corrected.tool_call_id]
    assert (fixed.kind, fixed.corrected_to_id, fixed.difference) == (
        "superseded",
        correction.tool_call_id,
        {"end": ["a", "b"]},
    )
    tables = connection.introspection.table_names()
    assert "approvals_pendingaction" not in tables
    assert "approvals_pendingactionevent" not in tables


@pytest.mark.django_db(transaction=True)
def test_notices_not_sent_yet_are_renamed_unsent_and_back():
    """A notice not sent yet was "waiting", the inbox's word for requests; the
    rename keeps every notice's state, forwards and back."""
    old = _migrate([("approvals", "0008_notifications")])
    try:
        Role = old.get_model("gyms", "StaffRole")
        Notice = old.get_model("approvals", "StaffNotice")
        business = BusinessFactory()
        role = Role.objects.create(
            business_id=business.pk, user_id=UserFactory().pk, role="staff"
        )
        for status in ("waiting", "waiting", "sent", "dropped"):
            Notice.objects.create(
                business_id=business.pk,
                role_id=role.pk,
                kind="reminder",
                status=status,
            )
    finally:
        new = _migrate(None)

    statuses = sorted(
        new.get_model("approvals", "StaffNotice").objects.values_list(
            "status", flat=True
        )
    )
    assert statuses == ["dropped", "sent", "unsent", "unsent"]

    back = _migrate([("approvals", "0008_notifications")])
    try:
        statuses = sorted(
            back.get_model("approvals", "StaffNotice").objects.values_list(
                "status", flat=True
            )
        )
        assert statuses == ["dropped", "sent", "waiting", "waiting"]
    finally:
        _migrate(None)
