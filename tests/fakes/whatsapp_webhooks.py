"""The webhooks Meta posts to the app, as the fake Graph API builds them: an
incoming message (which opens the sender's 24-hour window), status updates of
the messages the fake accepted, batches, and the subscription handshake's query.
Each comes as the raw body and its headers, signed with the app secret.

Only the standard library is used.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from tests.fakes.whatsapp_api import GraphApi
from tests.fakes.whatsapp_wire import (
    KNOWN_ERRORS,
    UNDELIVERABLE,
    ErrorKind,
    encode_webhook,
    envelope,
    inbound_value,
    new_wamid,
    now,
    sign,
    status_value,
    webhook_error,
)

STATUSES = ("sent", "delivered", "read", "failed")
Webhook = tuple[bytes, dict[str, str]]


class GraphWebhooks(GraphApi):
    """Builds what Meta would post about this number's messages."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.app_secret = secrets.token_hex(16)
        self.verify_token = secrets.token_urlsafe(16)

    def sign(self, body: bytes) -> str:
        """The ``X-Hub-Signature-256`` value Meta would send with ``body``."""
        return sign(body, self.app_secret)

    def inbound_text(
        self,
        wa_id: str,
        text: str,
        name: str = "Ana",
        wamid: str | None = None,
        timestamp: int | None = None,
    ) -> Webhook:
        """The webhook of a text ``wa_id`` sends to the business number."""
        message = {"type": "text", "text": {"body": text}}
        return self.inbound_message(wa_id, message, name, wamid, timestamp)

    def inbound_message(
        self,
        wa_id: str,
        message: dict[str, Any],
        name: str = "Ana",
        wamid: str | None = None,
        timestamp: int | None = None,
    ) -> Webhook:
        """The webhook of any incoming message (``message`` holds its ``type``
        and typed object). It opens the sender's 24-hour window at its time."""
        wamid = wamid or new_wamid(wa_id, inbound=True)
        stamp = int(self.clock()) if timestamp is None else int(timestamp)
        with self._lock:
            self.inbound_wamids.add(wamid)
            previous = self.last_inbound.get(wa_id)
            if previous is None or stamp > previous:
                self.last_inbound[wa_id] = float(stamp)
        value = inbound_value(
            wa_id=wa_id, name=name, wamid=wamid, timestamp=stamp, message=message
        )
        return self._webhook(value)

    def status_update(
        self,
        wamid: str,
        status: str,
        recipient_id: str | None = None,
        errors: list[dict[str, Any] | int] | None = None,
        timestamp: int | None = None,
    ) -> Webhook:
        """The status webhook of a message the business sent.

        ``recipient_id`` defaults to the recipient of the accepted message;
        a ``failed`` status without ``errors`` carries the message's own failure
        (131047 or 131026), else 131026. An error given as a code is written
        out as Meta's error object (:meth:`error_object`).
        """
        if status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}")
        sent = self.message(wamid)
        if recipient_id is None:
            if sent is None:
                raise ValueError(f"no accepted message {wamid}: give recipient_id")
            recipient_id = sent["wa_id"]
        if status == "failed" and errors is None:
            errors = [sent["failure"] if sent is not None else UNDELIVERABLE.code]
        objects = [
            e if isinstance(e, dict) else self.error_object(e) for e in errors or []
        ]
        value = status_value(
            wamid=wamid,
            status=status,
            recipient_id=recipient_id,
            timestamp=now() if timestamp is None else timestamp,
            category=sent["category"] if sent is not None else "service",
            errors=objects if status == "failed" else None,
        )
        return self._webhook(value)

    def status_callbacks_for(self, wamid: str) -> list[Webhook]:
        """What Meta posts about a message the fake accepted: ``sent``,
        ``delivered`` and ``read`` a second apart, or only ``failed``."""
        sent = self.message(wamid)
        if sent is None:
            raise ValueError(f"no accepted message {wamid}")
        start = int(sent["at"])
        if sent["failure"] is not None:
            return [self.status_update(wamid, "failed", timestamp=start + 1)]
        return [
            self.status_update(wamid, status, timestamp=start + offset)
            for offset, status in enumerate(("sent", "delivered", "read"), start=1)
        ]

    def combine(self, *webhooks: Webhook) -> Webhook:
        """One delivery holding the entries of several (Meta batches updates)."""
        entries = [entry for body, _ in webhooks for entry in json.loads(body)["entry"]]
        payload = {"object": "whatsapp_business_account", "entry": entries}
        return encode_webhook(payload, self.app_secret)

    def verification_params(self, challenge: str = "1158201444") -> dict[str, str]:
        """The query of Meta's subscription handshake (GET to the webhook)."""
        return {
            "hub.mode": "subscribe",
            "hub.challenge": challenge,
            "hub.verify_token": self.verify_token,
        }

    def error_object(self, code: int | ErrorKind) -> dict[str, Any]:
        """An ``errors`` item of a failed status for this code or error."""
        if isinstance(code, ErrorKind):
            return webhook_error(code)
        kind = KNOWN_ERRORS.get(code, ErrorKind(code, 400, "Generic user error", ""))
        return webhook_error(kind)

    def _webhook(self, value: dict[str, Any]) -> Webhook:
        payload = envelope(
            waba_id=self.waba_id,
            display_number="".join(c for c in self.display_phone_number if c.isdigit()),
            phone_number_id=self.phone_number_id,
            value=value,
        )
        return encode_webhook(payload, self.app_secret)
