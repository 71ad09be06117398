"""``/channels/whatsapp/<agent public key>/``: Meta's webhook for the agent's
WhatsApp number.

- GET is the subscription handshake: ``hub.challenge`` back when ``hub.mode`` is
  ``subscribe`` and ``hub.verify_token`` is the channel's, 403 otherwise.
- POST is a delivery, signed by Meta: ``X-Hub-Signature-256: sha256=<hex
  HMAC-SHA256 of the raw body with the app secret>``, compared in constant
  time. Anything refused (a body too long, a missing or wrong signature, a body
  that is not Meta's JSON, another number's) stores nothing. Messages are
  recorded once per ``wamid`` and answered at once (200); their turns run in a
  Celery task, enqueued when the records are committed. Statuses are recorded
  on the replies they name.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from functools import partial
from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from agents.database import db_call
from agents.models import WhatsAppChannel
from agents.whatsapp.inbound import inbound_record
from agents.whatsapp.statuses import reply_status_record

#: The longest delivery taken (Meta's are far shorter: up to a thousand updates).
MAX_BODY_BYTES = 3 * 1024 * 1024
SIGNATURE_PREFIX = "sha256="


def _error(status: int, code: str, detail: str) -> JsonResponse:
    return JsonResponse({"error": code, "detail": detail}, status=status)


def signature_valid(*, body: bytes, header: str, app_secret: str) -> bool:
    """Whether ``header`` is the body's signature with the app secret."""
    if not header.startswith(SIGNATURE_PREFIX) or not app_secret:
        return False
    expected = hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()
    given = header[len(SIGNATURE_PREFIX) :].strip().lower()
    return hmac.compare_digest(expected.encode(), given.encode("ascii", "replace"))


def _channel(public_key: str) -> WhatsAppChannel | None:
    return (
        WhatsAppChannel.objects.select_related("agent")
        .filter(agent__public_key=public_key)
        .first()
    )


class NotMeta(ValueError):
    """The body is not a delivery as Meta sends them."""


def _updates(payload: Any) -> list[tuple[str, dict[str, Any]]]:
    """Each ``messages`` change's phone number id and value, checked for shape."""
    if not isinstance(payload, dict) or payload.get("object") != (
        "whatsapp_business_account"
    ):
        raise NotMeta("not a WhatsApp Business Account delivery")
    entries = payload.get("entry")
    if not isinstance(entries, list):
        raise NotMeta("no entry list")
    found = []
    for entry in entries:
        changes = entry.get("changes") if isinstance(entry, dict) else None
        if not isinstance(changes, list):
            raise NotMeta("an entry without a changes list")
        for change in changes:
            if not isinstance(change, dict) or change.get("field") != "messages":
                continue
            value = change.get("value")
            if not isinstance(value, dict):
                raise NotMeta("a change without a value")
            metadata = value.get("metadata")
            if not isinstance(metadata, dict):
                raise NotMeta("a change without metadata")
            _check_items(value)
            found.append((str(metadata.get("phone_number_id") or ""), value))
    return found


def _check_items(value: dict[str, Any]) -> None:
    for key in ("messages", "statuses"):
        items = value.get(key, [])
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise NotMeta(f"{key} is not a list of objects")
    for item in value.get("messages", []):
        if (
            not isinstance(item.get("id"), str)
            or not item["id"]
            or len(item["id"]) > 255
        ):
            raise NotMeta("a message without a usable id")
        if not isinstance(item.get("from"), str) or not item["from"]:
            raise NotMeta("a message without a sender")


def _store(channel: WhatsAppChannel, updates: list[tuple[str, dict[str, Any]]]) -> None:
    """Record the delivery's messages and statuses, each on its own (a message
    is one insert, committed at once), and enqueue each new message's turn."""
    from agents.tasks import whatsapp_turn  # the tasks module imports this one

    for _, value in updates:
        for item in value.get("statuses", []):
            reply_status_record(phone_number_id=channel.phone_number_id, status=item)
        new = inbound_record(channel=channel, messages=value.get("messages", []))
        for inbound_id in new:
            transaction.on_commit(partial(whatsapp_turn.delay, inbound_id))


def _handshake(request: HttpRequest, channel: WhatsAppChannel) -> HttpResponse:
    mode = request.GET.get("hub.mode", "")
    token = request.GET.get("hub.verify_token", "")
    challenge = request.GET.get("hub.challenge", "")
    if mode == "subscribe" and hmac.compare_digest(
        token.encode(), channel.verify_token.encode()
    ):
        return HttpResponse(challenge, content_type="text/plain")
    return HttpResponse("verification failed", status=403, content_type="text/plain")


def _body(request: HttpRequest) -> bytes | None:
    """The raw body, or None when it is longer than ``MAX_BODY_BYTES``."""
    try:
        declared = int(request.headers.get("Content-Length") or 0)
    except ValueError:
        declared = 0
    if declared > MAX_BODY_BYTES:
        return None
    raw = request.read(MAX_BODY_BYTES + 1)
    return None if len(raw) > MAX_BODY_BYTES else raw


def _delivery(request: HttpRequest, channel: WhatsAppChannel) -> HttpResponseBase:
    """A POST's whole work: checked, then stored (a thread of the database's)."""
    raw = _body(request)
    if raw is None:
        return _error(413, "too_long", "The body is too long.")
    signature = request.headers.get("X-Hub-Signature-256", "")
    if not signature_valid(body=raw, header=signature, app_secret=channel.app_secret):
        return _error(401, "unauthorized", "The signature is missing or wrong.")
    try:
        updates = _updates(json.loads(raw))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return _error(400, "bad_request", "The body is not a WhatsApp delivery.")
    if any(phone != channel.phone_number_id for phone, _ in updates):
        return _error(
            404, "unknown_phone_number", "The delivery names another phone number."
        )
    _store(channel, updates)
    return HttpResponse(status=200)


def _answer(request: HttpRequest, public_key: str) -> HttpResponseBase:
    channel = _channel(public_key)
    if channel is None:
        return _error(404, "not_found", "No WhatsApp channel has that address.")
    if request.method == "GET":
        return _handshake(request, channel)
    return _delivery(request, channel)


@csrf_exempt
async def whatsapp_webhook(request: HttpRequest, public_key: str) -> HttpResponseBase:
    """Meta's webhook for one agent's WhatsApp number."""
    if request.method not in ("GET", "POST"):
        refused = _error(405, "bad_request", "Use GET or POST.")
        refused["Allow"] = "GET, POST"
        return refused
    return await db_call(_answer, request, public_key)
