"""What became of each message sent: the statuses Meta's webhook reports.

They may come out of order (``read`` before ``delivered``); a status is
recorded only when it goes forward, so a reply never goes back from read to
sent. A status naming a message Gymnasia did not send is ignored.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.translation import gettext, override

from agents.models import WhatsAppReply
from agents.whatsapp.sending import REFUSALS, whatsapp_unreached_told

Status = WhatsAppReply.Status
#: Each status Meta reports, and the ones it may follow.
FORWARD = {
    "sent": (Status.SENDING, Status.ACCEPTED),
    "delivered": (Status.SENDING, Status.ACCEPTED, Status.SENT),
    "read": (Status.SENDING, Status.ACCEPTED, Status.SENT, Status.DELIVERED),
    "failed": (Status.SENDING, Status.ACCEPTED, Status.SENT),
}


def reply_status_record(*, phone_number_id: str, status: dict[str, Any]) -> bool:
    """Record one status callback on the reply it names (of this number's
    channel); whether it changed anything."""
    name = str(status.get("status") or "")
    wamid = status.get("id")
    if name not in FORWARD or not isinstance(wamid, str):
        return False
    fields: dict[str, Any] = {"status": name, "status_at": timezone.now()}
    if name == "failed":
        errors = status.get("errors") or [{}]
        error = errors[0] if isinstance(errors, list) and errors else {}
        if isinstance(error, dict):
            code = error.get("code")
            fields["error_code"] = code if isinstance(code, int) else None
            fields["error_title"] = str(
                error.get("title") or error.get("message") or ""
            )[:300]
    named = WhatsAppReply.objects.filter(
        wamid=wamid, conversation__agent__whatsapp__phone_number_id=phone_number_id
    )
    changed = named.filter(status__in=FORWARD[name]).update(**fields)
    if changed and name == "failed":
        reply = named.select_related("message__conversation__agent").get()
        code = fields.get("error_code")
        with override(reply.message.conversation.agent.language):
            words = str(REFUSALS.get(code or 0) or fields.get("error_title") or "")
            whatsapp_unreached_told(
                reply.message,
                gettext(
                    "WhatsApp could not deliver the message (code %(code)s): %(words)s"
                )
                % {"code": code, "words": words},
                code,
            )
    return bool(changed)
