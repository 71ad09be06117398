"""The fake Graph API's endpoints: authentication, the phone number node, the
account's templates, and ``POST /{phone-number-id}/messages`` with the
reference's validation.

:class:`GraphApi` holds the state the endpoints read and write; the public face
(set-up, webhook builders, faults) is :class:`tests.fakes.whatsapp_graph.GraphFake`.
Which errors are synchronous and which arrive later as a ``failed`` status is
explained there. Only the standard library is used.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.fakes.whatsapp_listener import (
    GraphListener,
    GraphRequest,
    GraphResponse,
    Refusal,
    invalid,
    json_response,
    refuse,
)
from tests.fakes.whatsapp_templates import Template, check_template, template_listing
from tests.fakes.whatsapp_wire import (
    NOT_IN_ALLOWED_LIST,
    RE_ENGAGEMENT,
    UNDELIVERABLE,
    ErrorKind,
    graph_error,
    new_wamid,
)

WINDOW_SECONDS = 24 * 3600
TEXT_MAX = 4096

_PATH = re.compile(r"/(v\d+\.\d+)/([^/]+)(?:/([^/]+))?/?")
# Other message types of the reference, accepted with their object present.
_OTHER_TYPES = frozenset(
    {
        "audio",
        "contacts",
        "document",
        "image",
        "interactive",
        "location",
        "reaction",
        "sticker",
        "video",
    }
)
# Fields of the phone number node that GET answers without ``fields``.
DEFAULT_NUMBER_FIELDS = (
    "verified_name",
    "code_verification_status",
    "display_phone_number",
    "quality_rating",
    "platform_type",
    "throughput",
    "id",
)


class GraphApi(GraphListener):
    """State and endpoints of one WhatsApp Business phone number."""

    def __init__(
        self,
        *,
        phone_number_id: str,
        waba_id: str,
        display_phone_number: str,
        verified_name: str,
        access_token: str,
    ) -> None:
        super().__init__()
        self.phone_number_id = phone_number_id
        self.waba_id = waba_id
        self.display_phone_number = display_phone_number
        self.access_token = access_token
        self.number_fields: dict[str, Any] = {
            "id": phone_number_id,
            "display_phone_number": display_phone_number,
            "verified_name": verified_name,
            "quality_rating": "GREEN",
            "code_verification_status": "VERIFIED",
            "platform_type": "CLOUD_API",
            "throughput": {"level": "STANDARD"},
            "name_status": "APPROVED",
            "status": "CONNECTED",
            "messaging_limit_tier": "TIER_1K",
            "account_mode": "LIVE",
            "is_official_business_account": False,
        }
        self.clock: Callable[[], float] = time.time
        self.token_expired = False
        self.allowed_recipients: set[str] | None = None
        self.templates: dict[tuple[str, str], Template] = {}
        self.last_inbound: dict[str, float] = {}
        self.unreachable: set[str] = set()
        self.inbound_wamids: set[str] = set()
        self.requests: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.read_marks: list[dict[str, Any]] = []
        self._lock = threading.RLock()

    # ---------------------------------------------------------------- routing

    def _route(self, request: GraphRequest) -> GraphResponse:
        """Authenticate, then answer the endpoint the path names."""
        match = _PATH.fullmatch(request.path)
        if match is None:
            message = f"Unknown path components: {request.path}"
            return json_response(400, graph_error(2500, message))
        version, node, edge = match.groups()
        headers = {"facebook-api-version": version}
        refused = self._authenticate(request)
        if refused is not None:
            return refused
        try:
            payload = self._endpoint(request, node, edge)
        except Refusal as refusal:
            refusal.response.headers.update(headers)
            return refusal.response
        return json_response(200, payload, headers)

    def _endpoint(
        self, request: GraphRequest, node: str, edge: str | None
    ) -> dict[str, Any]:
        """The answer of the endpoint for ``node`` and ``edge``."""
        method = request.method
        if node == self.phone_number_id and edge is None and method == "GET":
            return self._number(request)
        if node == self.phone_number_id and edge == "messages" and method == "POST":
            return self._messages(request)
        if node == self.waba_id and edge == "message_templates" and method == "GET":
            with self._lock:
                templates = list(self.templates.values())
            return template_listing(templates, request.query.get("name"))
        known = {
            self.phone_number_id: ("messages",),
            self.waba_id: ("message_templates",),
        }
        if edge is not None and node in known and edge not in known[node]:
            message = f"Unknown path components: /{edge}"
            raise Refusal(json_response(400, graph_error(2500, message)))
        raise Refusal(self._unsupported(request, node))

    def _authenticate(self, request: GraphRequest) -> GraphResponse | None:
        """None for the right token (Bearer header or ``access_token``)."""
        token: str | None = None
        if request.authorization is not None:
            scheme, _, value = request.authorization.strip().partition(" ")
            if scheme.lower() in ("bearer", "oauth"):
                token = value.strip()
        elif isinstance(request.query.get("access_token"), str):
            token = str(request.query["access_token"])
        challenge = {"WWW-Authenticate": 'OAuth "Facebook Platform" "invalid_token"'}
        if not token:
            message = "An access token is required to request this resource."
            return json_response(400, graph_error(104, message))
        if not secrets.compare_digest(token.encode(), self.access_token.encode()):
            message = "Invalid OAuth access token - Cannot parse access token"
            return json_response(401, graph_error(190, message), challenge)
        if self.token_expired:
            message = "Error validating access token: Session has expired."
            error = graph_error(190, message, subcode=463)
            return json_response(401, error, challenge)
        return None

    def _unsupported(self, request: GraphRequest, node: str) -> GraphResponse:
        """Graph's answer for an object id this token cannot use."""
        message = (
            f"Unsupported {request.method.lower()} request. Object with ID "
            f"'{node}' does not exist, cannot be loaded due to missing "
            "permissions, or does not support this operation."
        )
        error = graph_error(100, message, error_type="GraphMethodException", subcode=33)
        return json_response(400, error)

    # ---------------------------------------------------------- phone number

    def _number(self, request: GraphRequest) -> dict[str, Any]:
        """``GET /{phone-number-id}``: default fields, or those in ``fields``."""
        raw = request.query.get("fields")
        if raw is None:
            wanted = list(DEFAULT_NUMBER_FIELDS)
        else:
            text = raw if isinstance(raw, str) else ",".join(raw)
            wanted = [name.strip() for name in text.split(",") if name.strip()]
        with self._lock:
            for name in wanted:
                if name not in self.number_fields:
                    message = (
                        f"(#100) Tried accessing nonexisting field ({name}) on node "
                        "type (WhatsAppBusinessPhoneNumber)"
                    )
                    response = json_response(400, graph_error(100, message))
                    raise Refusal(response)
            fields = {name: self.number_fields[name] for name in wanted}
        fields["id"] = self.phone_number_id
        return fields

    # --------------------------------------------------------------- messages

    def _messages(self, request: GraphRequest) -> dict[str, Any]:
        """``POST /{phone-number-id}/messages``: send, or mark as read."""
        try:
            payload = json.loads(request.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise invalid("The request body is not valid JSON.") from None
        if not isinstance(payload, dict):
            raise invalid("The request body must be a JSON object.")
        if payload.get("messaging_product") != "whatsapp":
            raise invalid("The parameter messaging_product is required: 'whatsapp'.")
        if "status" in payload:
            return self._mark_read(payload)
        if payload.get("recipient_type", "individual") != "individual":
            raise invalid("Param recipient_type must be 'individual'.")
        to = payload.get("to")
        if not isinstance(to, str) or not to.strip():
            raise invalid("The parameter to is required.")
        wa_id = re.sub(r"\D", "", to)
        if not 8 <= len(wa_id) <= 15:
            raise invalid(f"Param to ({to}) is not a valid phone number.")
        kind = payload.get("type", "text")
        template: Template | None = None
        if kind == "text":
            self._check_text(payload.get("text"))
        elif kind == "template":
            with self._lock:
                template = check_template(self.templates, payload.get("template"))
        elif kind not in _OTHER_TYPES or payload.get(kind) is None:
            raise invalid(f"Param {kind} is not a valid message type with its object.")
        with self._lock:
            allowed = self.allowed_recipients
            if allowed is not None and wa_id not in allowed:
                raise refuse(NOT_IN_ALLOWED_LIST)
            return self._accept(payload, to, wa_id, template)

    def _check_text(self, text: Any) -> None:
        if not isinstance(text, dict):
            raise invalid("Param text is required for a text message.")
        body = text.get("body")
        if not isinstance(body, str) or not body:
            raise invalid("Param text['body'] is required.")
        if len(body) > TEXT_MAX:
            raise invalid(f"Param text['body'] must be at most {TEXT_MAX} characters.")
        if not isinstance(text.get("preview_url", False), bool):
            raise invalid("Param text['preview_url'] must be a boolean.")

    def _accept(
        self, payload: dict[str, Any], to: str, wa_id: str, template: Template | None
    ) -> dict[str, Any]:
        """Record an accepted message; the caller holds the lock.

        A number not on WhatsApp, or free-form text outside the 24-hour window,
        is accepted here and fails later (see :meth:`GraphFake.status_callbacks_for`).
        """
        wamid = new_wamid(wa_id, inbound=False)
        failure: ErrorKind | None = None
        if wa_id in self.unreachable:
            failure = UNDELIVERABLE
        elif template is None and not self.in_window(wa_id):
            failure = RE_ENGAGEMENT
        self.sent.append(
            {
                "wamid": wamid,
                "to": to,
                "wa_id": wa_id,
                "type": payload.get("type", "text"),
                "json": payload,
                "category": "service"
                if template is None
                else template.category.lower(),
                "failure": None if failure is None else failure.code,
                "at": self.clock(),
            }
        )
        message: dict[str, Any] = {"id": wamid}
        if template is not None:
            message["message_status"] = "accepted"
        return {
            "messaging_product": "whatsapp",
            "contacts": [{"input": to, "wa_id": wa_id}],
            "messages": [message],
        }

    def _mark_read(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Mark an incoming message as read, with a typing indicator or not."""
        if payload.get("status") != "read":
            raise invalid("Param status must be 'read'.")
        message_id = payload.get("message_id")
        typing = payload.get("typing_indicator")
        if typing is not None and typing != {"type": "text"}:
            raise invalid("Param typing_indicator['type'] must be 'text'.")
        with self._lock:
            if message_id not in self.inbound_wamids:
                raise invalid(
                    f"Param message_id ({message_id}) names no received message."
                )
            self.read_marks.append(
                {"message_id": message_id, "typing": typing is not None}
            )
        return {"success": True}

    def in_window(self, wa_id: str) -> bool:
        """Whether ``wa_id`` wrote less than 24 hours ago (by :attr:`clock`)."""
        with self._lock:
            last = self.last_inbound.get(wa_id)
        return last is not None and self.clock() - last < WINDOW_SECONDS

    def message(self, wamid: str) -> dict[str, Any] | None:
        """The accepted message with this id, if any."""
        with self._lock:
            return next((e for e in self.sent if e["wamid"] == wamid), None)
