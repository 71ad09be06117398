"""The assistant's background work: owners' budget mails, WhatsApp turns and sends."""

from __future__ import annotations

from celery import shared_task

from agents.budget_alerts import budget_alert_mail
from agents.models import Message
from agents.whatsapp.inbound import inbound_turn
from agents.whatsapp.sending import whatsapp_deliver


@shared_task(name="agents.mail_budget_alert")
def mail_budget_alert(alert_id: int, role_id: int) -> None:
    """Mail one owner one budget alert; in their quiet hours, try again later."""
    wait = budget_alert_mail(alert_id=alert_id, role_id=role_id)
    if wait > 0:
        mail_budget_alert.apply_async((alert_id, role_id), countdown=wait)


@shared_task(name="agents.whatsapp_turn")
def whatsapp_turn(inbound_id: int) -> str:
    """Run the turn of one WhatsApp message received (once: the database
    decides, not the broker) and send its replies."""
    return inbound_turn(inbound_id=inbound_id)


@shared_task(name="agents.whatsapp_deliver")
def whatsapp_deliver_messages(message_ids: list[int], asked: str = "") -> None:
    """Send messages added to a WhatsApp conversation after its turn (what
    staff decided), within the 24 hours or as the owner's template."""
    for message in Message.objects.filter(pk__in=message_ids).order_by("pk"):
        whatsapp_deliver(message=message, asked=asked)
