"""WhatsApp Cloud API's wire format as the fake Graph API serves it: message ids,
Graph error envelopes, the webhook payloads Meta posts and their signature.

The shapes follow Meta's published Cloud API reference (see the docstring of
``tests.fakes.whatsapp_graph`` for the pages and version). Only the standard
library is used.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import string
import time
from dataclasses import dataclass
from typing import Any

ERROR_CODES_PAGE = (
    "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"
)

_TRACE_ALPHABET = string.ascii_letters + string.digits + "_-"


@dataclass(frozen=True)
class ErrorKind:
    """One error of the reference's catalogue: its code, the HTTP status of a
    synchronous answer, the short title Meta puts in ``message`` and a detail."""

    code: int
    http_status: int
    title: str
    details: str


# The codes the fake produces. Titles are the wire values clients see; the
# details are the fake's own wording (clients should not depend on them).
INVALID_PARAMETER = ErrorKind(100, 400, "Invalid parameter", "")
RATE_LIMIT_HIT = ErrorKind(
    130429,
    400,
    "Rate limit hit",
    "Too many messages from this phone number for the API's throughput.",
)
PAIR_RATE_LIMIT_HIT = ErrorKind(
    131056,
    400,
    "(Business Account, Consumer Account) pair rate limit hit",
    "Too many messages to the same recipient in a short time.",
)
NOT_IN_ALLOWED_LIST = ErrorKind(
    131030,
    400,
    "Recipient phone number not in allowed list",
    "The recipient is not among the test numbers this business may write to.",
)
UNDELIVERABLE = ErrorKind(
    131026, 400, "Message undeliverable", "The message could not be delivered."
)
RE_ENGAGEMENT = ErrorKind(
    131047,
    400,
    "Re-engagement message",
    "More than 24 hours have passed since the recipient last wrote to this number.",
)
TEMPLATE_PARAM_COUNT = ErrorKind(
    132000,
    400,
    "Number of parameters does not match the expected number of params",
    "",
)
TEMPLATE_MISSING = ErrorKind(
    132001, 404, "Template name does not exist in the translation", ""
)
TEMPLATE_TOO_LONG = ErrorKind(132005, 400, "Template Hydrated Text Too Long", "")
TEMPLATE_PAUSED = ErrorKind(132015, 400, "Template is Paused", "")
TEMPLATE_DISABLED = ErrorKind(132016, 400, "Template is Disabled", "")
KNOWN_ERRORS = {
    kind.code: kind
    for kind in (
        INVALID_PARAMETER,
        RATE_LIMIT_HIT,
        PAIR_RATE_LIMIT_HIT,
        NOT_IN_ALLOWED_LIST,
        UNDELIVERABLE,
        RE_ENGAGEMENT,
        TEMPLATE_PARAM_COUNT,
        TEMPLATE_MISSING,
        TEMPLATE_TOO_LONG,
        TEMPLATE_PAUSED,
        TEMPLATE_DISABLED,
    )
}


def fbtrace_id() -> str:
    """A random trace id like the ``fbtrace_id`` of Graph's answers."""
    return "A" + "".join(secrets.choice(_TRACE_ALPHABET) for _ in range(22))


def new_wamid(wa_id: str, *, inbound: bool) -> str:
    """A message id in Meta's format: ``wamid.`` and base64 of a small binary
    record holding the user's number and a random hex id (outgoing messages
    carry 18 hex digits, incoming ones 20, as Meta's examples do)."""
    number = wa_id.encode("ascii")
    if inbound:
        tail = b"\x12\x18\x14" + secrets.token_hex(10).upper().encode("ascii")
    else:
        tail = b"\x11\x18\x12" + secrets.token_hex(9).upper().encode("ascii")
    record = b"\x1c\x18" + bytes([len(number)]) + number + b"\x15\x02\x00" + tail
    return "wamid." + base64.b64encode(record + b"\x00").decode("ascii")


def whatsapp_error(kind: ErrorKind, details: str | None = None) -> dict[str, Any]:
    """The Graph error envelope of a Cloud API error (``error_data`` included)."""
    return {
        "error": {
            "message": f"(#{kind.code}) {kind.title}",
            "type": "OAuthException",
            "code": kind.code,
            "error_data": {
                "messaging_product": "whatsapp",
                "details": details if details is not None else kind.details,
            },
            "fbtrace_id": fbtrace_id(),
        }
    }


def graph_error(
    code: int,
    message: str,
    *,
    error_type: str = "OAuthException",
    subcode: int | None = None,
    is_transient: bool | None = None,
) -> dict[str, Any]:
    """A plain Graph API error envelope (token, object and server errors)."""
    error: dict[str, Any] = {"message": message, "type": error_type, "code": code}
    if subcode is not None:
        error["error_subcode"] = subcode
    if is_transient is not None:
        error["is_transient"] = is_transient
    error["fbtrace_id"] = fbtrace_id()
    return {"error": error}


def webhook_error(kind: ErrorKind, details: str | None = None) -> dict[str, Any]:
    """An error object as the ``errors`` of a failed status carry it."""
    return {
        "code": kind.code,
        "title": kind.title,
        "message": kind.title,
        "error_data": {"details": details if details is not None else kind.details},
        "href": ERROR_CODES_PAGE,
    }


def sign(body: bytes, app_secret: str) -> str:
    """The ``X-Hub-Signature-256`` value: HMAC-SHA256 of the raw body, in hex."""
    digest = hmac.new(app_secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def encode_webhook(
    payload: dict[str, Any], app_secret: str
) -> tuple[bytes, dict[str, str]]:
    """The bytes Meta posts and its headers. Non-ASCII characters are escaped
    (``\\uXXXX``) as in Meta's deliveries, so a receiver that re-serialises the
    JSON before checking the signature gets a different digest."""
    body = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "facebookexternalua",
        "X-Hub-Signature-256": sign(body, app_secret),
    }
    return body, headers


def envelope(
    *, waba_id: str, display_number: str, phone_number_id: str, value: dict[str, Any]
) -> dict[str, Any]:
    """The outer shape of a ``messages`` webhook around one change's value."""
    inner = {
        "messaging_product": "whatsapp",
        "metadata": {
            "display_phone_number": display_number,
            "phone_number_id": phone_number_id,
        },
        **value,
    }
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": waba_id, "changes": [{"value": inner, "field": "messages"}]}],
    }


def inbound_value(
    *, wa_id: str, name: str, wamid: str, timestamp: int, message: dict[str, Any]
) -> dict[str, Any]:
    """The ``value`` of an incoming message: the sender's contact and the message."""
    return {
        "contacts": [{"profile": {"name": name}, "wa_id": wa_id}],
        "messages": [
            {"from": wa_id, "id": wamid, "timestamp": str(timestamp), **message}
        ],
    }


def status_value(
    *,
    wamid: str,
    status: str,
    recipient_id: str,
    timestamp: int,
    category: str,
    errors: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    """The ``value`` of a status notification for a message the business sent.

    ``sent`` and ``delivered`` carry the conversation and pricing objects
    (per-message pricing: a reply in the service window is free);
    ``read`` carries neither; ``failed`` carries the ``errors`` array.
    """
    entry: dict[str, Any] = {
        "id": wamid,
        "status": status,
        "timestamp": str(timestamp),
        "recipient_id": recipient_id,
    }
    if status in ("sent", "delivered"):
        entry["conversation"] = {
            "id": secrets.token_hex(16),
            "origin": {"type": category},
        }
        if status == "sent":
            entry["conversation"]["expiration_timestamp"] = str(timestamp + 24 * 3600)
        free = category == "service"
        entry["pricing"] = {
            "billable": not free,
            "pricing_model": "PMP",
            "type": "free_customer_service" if free else "regular",
            "category": category,
        }
    if errors:
        entry["errors"] = errors
    return {"statuses": [entry]}


def now() -> int:
    """Unix time in whole seconds, the unit of webhook timestamps."""
    return int(time.time())
