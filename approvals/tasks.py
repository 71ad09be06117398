"""Celery tasks of approvals: each takes ids, re-reads the database, calls one service."""

from __future__ import annotations

from celery import shared_task

from approvals.events import events_announce
from approvals.notices import notices_mail
from approvals.services import pending_action_execute, pending_actions_sweep
from approvals.webhooks import webhook_delivery_attempt


@shared_task(name="approvals.execute_approved_action")
def execute_approved_action(call_id: str) -> str:
    """Run one approved request, by its call's id (once: the database decides,
    not the broker)."""
    return pending_action_execute(action_id=call_id)


@shared_task(name="approvals.sweep")
def sweep_pending_actions() -> dict[str, int]:
    """Expire, re-send lost approvals, hand over stuck executions and the writes
    of turns that stopped while they ran; remind and escalate what still waits."""
    return pending_actions_sweep()


@shared_task(name="approvals.announce")
def announce() -> int:
    """Record the requests made and the cases opened since the last look, and
    tell the people and endpoints that want to hear of them."""
    return events_announce()


@shared_task(name="approvals.mail_staff")
def mail_staff(role_id: int) -> None:
    """Mail one person what waits for them; if a mail went out less than a
    minute ago, try again when the minute is over."""
    wait = notices_mail(role_id=role_id)
    if wait > 0:
        mail_staff.apply_async((role_id,), countdown=wait)


@shared_task(name="approvals.deliver_webhook")
def deliver_webhook(delivery_id: str) -> str:
    """Make the next try of one webhook delivery; after a try that did not get
    a 2xx, send this task again for when the next is due. The database counts
    the tries (a message delivered again makes none twice, and never one after
    a 2xx), so at most ``1 + len(WEBHOOK_RETRY_DELAYS)`` are made. At least
    once: a receiver deduplicates by the event's id."""
    attempt = webhook_delivery_attempt(delivery_id=delivery_id)
    if attempt.retry_in is not None:
        deliver_webhook.apply_async((delivery_id,), countdown=attempt.retry_in)
    return attempt.status
