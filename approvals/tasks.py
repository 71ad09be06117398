"""Celery tasks of approvals: each takes ids, re-reads the database, calls one service."""

from __future__ import annotations

from celery import shared_task

from approvals.services import pending_action_execute, pending_actions_sweep


@shared_task(name="approvals.execute_approved_action")
def execute_approved_action(call_id: str) -> str:
    """Run one approved request, by its call's id (once: the database decides,
    not the broker)."""
    return pending_action_execute(action_id=call_id)


@shared_task(name="approvals.sweep")
def sweep_pending_actions() -> dict[str, int]:
    """Expire, re-send lost approvals, and hand over stuck executions and the
    writes of turns that stopped while they ran."""
    return pending_actions_sweep()
