"""The assistant's background work: owners' budget mails."""

from __future__ import annotations

from celery import shared_task

from agents.budget_alerts import budget_alert_mail


@shared_task(name="agents.mail_budget_alert")
def mail_budget_alert(alert_id: int, role_id: int) -> None:
    """Mail one owner one budget alert; in their quiet hours, try again later."""
    wait = budget_alert_mail(alert_id=alert_id, role_id=role_id)
    if wait > 0:
        mail_budget_alert.apply_async((alert_id, role_id), countdown=wait)
