"""The fake Graph API's endpoints: authentication, the phone number node, and
``POST /{phone-number-id}/messages`` with the reference's validation.

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
from dataclasses import dataclass
from typing import Any

from tests.fakes.whatsapp_listener import GraphListener, GraphRequest, GraphResponse
from tests.fakes.whatsapp_wire import (
    INVALID_PARAMETER,
    NOT_IN_ALLOWED_LIST,
    RE_ENGAGEMENT,
    TEMPLATE_DISABLED,
    TEMPLATE_MISSING,
    TEMPLATE_PARAM_COUNT,
    TEMPLATE_PAUSED,
    UNDELIVERABLE,
    ErrorKind,
    graph_error,
    new_wamid,
    whatsapp_error,
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
# A template's text parameter may not hold new lines, tabs or more than four
# spaces in a row.
_BAD_PARAM_TEXT = re.compile(r"[\n\t]| {5,}")
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


@dataclass
class Template:
    """A message template of the business account, in one language."""

    name: str
    language: str
    status: str
    body_params: int
    category: str


class _Refusal(Exception):
    """A request answered with an error (raised inside validation)."""

    def __init__(self, response: GraphResponse) -> None:
        super().__init__(response.status)
        self.response = response


def json_response(
    status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> GraphResponse:
    body = json.dumps(payload).encode("utf-8")
    return GraphResponse(status, body, dict(headers or {}))


def refuse(kind: ErrorKind, details: str | None = None) -> _Refusal:
    return _Refusal(json_response(kind.http_status, whatsapp_error(kind, details)))


def invalid(details: str) -> _Refusal:
    return refuse(INVALID_PARAMETER, details)


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
            if (
                node == self.phone_number_id
                and edge is None
                and request.method == "GET"
            ):
                payload = self._number(request)
            elif node == self.phone_number_id and edge == "messages":
                if request.method != "POST":
                    raise _Refusal(self._unsupported(request, node))
                payload = self._messages(request)
            elif node == self.phone_number_id and edge is not None:
                message = f"Unknown path components: /{edge}"
                return json_response(400, graph_error(2500, message), headers)
            else:
                return self._unsupported(request, node)
        except _Refusal as refusal:
            refusal.response.headers.update(headers)
            return refusal.response
        return json_response(200, payload, headers)

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
                    raise _Refusal(response)
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
            template = self._check_template(payload.get("template"))
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

    def _check_template(self, template: Any) -> Template:
        """The named, approved template, with its body's parameter count right."""
        if not isinstance(template, dict) or not isinstance(template.get("name"), str):
            raise invalid("Param template['name'] is required.")
        language = template.get("language")
        if not isinstance(language, dict) or not isinstance(language.get("code"), str):
            raise invalid("Param template['language']['code'] is required.")
        name, code = template["name"], language["code"]
        with self._lock:
            found = self.templates.get((name, code))
        if found is None or found.status not in ("APPROVED", "PAUSED", "DISABLED"):
            raise refuse(
                TEMPLATE_MISSING, f"template name ({name}) does not exist in {code}"
            )
        if found.status == "PAUSED":
            raise refuse(TEMPLATE_PAUSED, f"Template {name} is paused.")
        if found.status == "DISABLED":
            raise refuse(TEMPLATE_DISABLED, f"Template {name} is disabled.")
        given = self._body_parameters(template.get("components", []))
        if given != found.body_params:
            details = (
                f"body: number of localizable_params ({given}) does not match the "
                f"expected number of params ({found.body_params})"
            )
            raise refuse(TEMPLATE_PARAM_COUNT, details)
        return found

    def _body_parameters(self, components: Any) -> int:
        """How many parameters the body component gives (checking each one)."""
        if not isinstance(components, list):
            raise invalid("Param template['components'] must be an array.")
        count = 0
        for component in components:
            if not isinstance(component, dict) or not isinstance(
                component.get("type"), str
            ):
                raise invalid("Each template component needs a type.")
            parameters = component.get("parameters", [])
            if not isinstance(parameters, list):
                raise invalid("Param components['parameters'] must be an array.")
            if component["type"].lower() != "body":
                continue
            for parameter in parameters:
                if not isinstance(parameter, dict) or parameter.get("type") != "text":
                    raise invalid("Body parameters of this template are of type text.")
                value = parameter.get("text")
                if not isinstance(value, str) or not value:
                    raise invalid("Param text is required for a text parameter.")
                if _BAD_PARAM_TEXT.search(value):
                    raise invalid(
                        "Param text cannot have new-line/tab characters or more "
                        "than 4 consecutive spaces"
                    )
                count += 1
        return count

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
