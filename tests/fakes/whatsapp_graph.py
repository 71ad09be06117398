"""A local stand-in for Meta's WhatsApp Business Cloud API (the Graph API) and
for the webhooks Meta posts to the app, built from Meta's published reference.

Reference followed: Meta's WhatsApp Business Platform pages on
developers.facebook.com as updated in mid 2026 (their examples name Graph API
v26.0; the fake accepts any ``v<major>.<minor>`` in the path and answers with a
``facebook-api-version`` header naming it):

- the Cloud API *messages* reference on developers.facebook.com: the send
  endpoint's body for text (body at most 4096 characters, ``preview_url``) and
  template messages (name, language code, components with text parameters),
  its answer (``messaging_product``, ``contacts[].input/wa_id``,
  ``messages[].id``, and ``message_status`` for templates), and the same
  endpoint's mark-as-read form with the optional typing indicator (the
  *typing indicators* page: ``{"success": true}``);
- the *messages webhook* reference and its *status messages* page: the
  ``whatsapp_business_account`` object, ``entry[].changes[].value`` with
  ``metadata``, ``contacts`` and ``messages`` for an incoming message, and
  ``statuses`` (sent, delivered, read, failed with an ``errors`` array; sent and
  delivered with conversation and pricing objects) for outgoing ones;
- the *WhatsApp error codes* page: Graph's error envelope (``message`` with the
  code and title, ``type``, ``code``, ``error_data.messaging_product/details``,
  ``fbtrace_id``; ``error_subcode`` only on generic Graph errors), the HTTP
  status per code, and the rule that an error comes back synchronously, through
  the webhook, or both;
- the webhooks guide: the ``X-Hub-Signature-256`` header (``sha256=`` and the
  hex HMAC-SHA256 of the raw body keyed with the app secret);
- the phone number node's fields (id, display_phone_number, verified_name,
  quality_rating, code_verification_status, platform_type, throughput, ...)
  and the business account's ``message_templates`` edge (name, language,
  status, category, components), cross-checked with the OpenAPI description of
  Cloud API v21.0 published in the api-evangelist/whatsapp repository (request,
  text, template and phone-number schemas).

The display number is formatted (``+34 910 00 00 00``) where the node answers
it and digits only in webhook ``metadata``, as in Meta's examples.

Synchronous or not, as the reference has it: validation errors (100), token
errors (190, 401; no token 104), a recipient outside a test number's allowed
list (131030), templates missing or not approved (132001, HTTP 404), paused
(132015) or disabled (132016), a wrong parameter count (132000), a body over
1024 characters once filled in (132005), a text parameter with a new line, a tab
or more than four spaces in a row (100), a read mark naming no received message
(100), and the rate limits (130429, 131056) are HTTP error answers and nothing
is sent. Free-form text outside 24 hours of the user's last message (131047)
and a number not on WhatsApp (131026) are accepted with a ``wamid`` (200) and
fail afterwards: the ``failed`` status webhook carries the code (see
:meth:`status_callbacks_for`).

Interface (stable; only added to)::

    fake = GraphFake()                  # started; fake.close() stops it
    graph_fake                          # pytest fixture: started, listed in settings
    whatsapp_bases_with(fake)           # override_settings adding fake.base_url
    running_graph_fake()                # context manager doing both
    fake.base_url                       # "http://127.0.0.1:<port>", no version
    fake.phone_number_id, fake.waba_id, fake.display_phone_number,
    fake.access_token, fake.app_secret, fake.verify_token
    body, headers = fake.inbound_text(wa_id=..., text=..., name="Ana",
                                      wamid=None, timestamp=None)
    body, headers = fake.inbound_message(wa_id, {"type": ..., ...}, name=...)
    body, headers = fake.combine(webhook, webhook, ...)  # one batched delivery
    fake.verification_params(challenge)  # hub.mode / hub.verify_token / hub.challenge
    client_kwargs(headers)              # headers as Django's test client takes them
    body, headers = fake.status_update(wamid=..., status="sent"|"delivered"|
                                       "read"|"failed", recipient_id=None,
                                       errors=None, timestamp=None)
                                      # errors: Meta error objects or codes
    fake.status_callbacks_for(wamid)    # [(body, headers)]: sent, delivered,
                                        # read; or the one failed status
    fake.sign(body) -> "sha256=<hex>"
    fake.add_template(name, language="es", status="APPROVED"|"PAUSED"|
                      "DISABLED"|"PENDING", body_params=2, category="UTILITY",
                      text=None)       # also listed by GET /{waba-id}/message_templates
    fake.set_last_inbound(wa_id, when)  # datetime or Unix seconds; None forgets
    fake.not_on_whatsapp(wa_id)         # later sends to it fail with 131026
    fake.allow_only(wa_ids)             # a test number's allowed list (131030)
    fake.expire_token()                 # 401, code 190, subcode 463 from now on
    fake.fault(mode, times=1, seconds=0.0, on="any")
        # on: "any" | "send" | "read" (mark as read, typing) | "number"
        # | "templates": which requests the fault spoils
        # "error_500" (500, code 2) | "unavailable" (503, code 2)
        # | "rate_limited" (130429) | "pair_rate_limited" (131056)
        # | "token_expired" | "slow" (answered after `seconds`) | "lost_after"
        # (handled and recorded, connection closed with no answer)
        # | "refused" (nothing listens for `seconds`)
    fake.sent       # accepted messages in order: {"wamid", "to", "wa_id",
                    # "type", "json", "category", "failure" (None or code), "at"}
    fake.message(wamid)                 # that entry of fake.sent, or None
    fake.texts_to(wa_id)                # text bodies accepted for wa_id
    fake.templates_to(wa_id)            # [(name, language, [body params])]
    fake.in_window(wa_id)               # wrote less than 24 h ago (fake.clock)
    fake.read_marks                     # [{"message_id", "typing"}]
    fake.number_fields, fake.clock      # editable: node fields, time source
    fake.requests   # every request: {"method", "path", "query", "headers",
                    # "json", "body"} (authorization redacted)
    fake.count(method, path_suffix)

Only the standard library is used (pytest and Django for the fixture).
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from tests.fakes.whatsapp_api import json_response
from tests.fakes.whatsapp_listener import GraphRequest, GraphResponse
from tests.fakes.whatsapp_templates import Template
from tests.fakes.whatsapp_webhooks import GraphWebhooks
from tests.fakes.whatsapp_wire import (
    PAIR_RATE_LIMIT_HIT,
    RATE_LIMIT_HIT,
    graph_error,
    whatsapp_error,
)

__all__ = [
    "GraphFake",
    "client_kwargs",
    "graph_fake",
    "running_graph_fake",
    "whatsapp_bases_with",
]

FAULT_MODES = frozenset(
    {
        "error_500",
        "unavailable",
        "rate_limited",
        "pair_rate_limited",
        "token_expired",
        "slow",
        "lost_after",
        "refused",
    }
)


REQUEST_KINDS = frozenset({"any", "send", "read", "number", "templates"})


@dataclass
class _Fault:
    mode: str
    remaining: int
    seconds: float
    on: str


class GraphFake(GraphWebhooks):
    """One WhatsApp Business number on loopback, started at construction."""

    def __init__(
        self,
        *,
        phone_number_id: str | None = None,
        waba_id: str | None = None,
        display_phone_number: str = "+34 910 00 00 00",
        verified_name: str = "Gimnasio Centro",
    ) -> None:
        super().__init__(
            phone_number_id=phone_number_id or _digits(15),
            waba_id=waba_id or _digits(15),
            display_phone_number=display_phone_number,
            verified_name=verified_name,
            access_token="EAAG" + secrets.token_urlsafe(48).replace("-", "x"),
        )
        self._faults: list[_Fault] = []
        self._fault_lock = threading.Lock()
        self.start()

    def close(self) -> None:
        """Stop listening for good (the port is released)."""
        self.stop()

    # ------------------------------------------------------------------ set-up

    def add_template(
        self,
        name: str,
        language: str = "es",
        status: str = "APPROVED",
        body_params: int = 2,
        category: str = "UTILITY",
        text: str | None = None,
    ) -> None:
        """A template of the business account in ``language`` (replaces one);
        ``text`` is its body, by default one with ``body_params`` placeholders."""
        if text is None:
            text = " ".join(f"{{{{{n}}}}}" for n in range(1, body_params + 1))
        template = Template(
            name, language, status.upper(), body_params, category.upper(), text
        )
        with self._lock:
            self.templates[(name, language)] = template

    def set_last_inbound(self, wa_id: str, when: datetime | float | None) -> None:
        """When ``wa_id`` last wrote (the 24-hour window starts there)."""
        with self._lock:
            if when is None:
                self.last_inbound.pop(wa_id, None)
            else:
                stamp = when.timestamp() if isinstance(when, datetime) else when
                self.last_inbound[wa_id] = float(stamp)

    def not_on_whatsapp(self, wa_id: str) -> None:
        """Messages to ``wa_id`` are accepted, then fail with 131026."""
        with self._lock:
            self.unreachable.add(wa_id)

    def allow_only(self, wa_ids: Iterable[str] | None) -> None:
        """Only these numbers may be written to (131030 otherwise); None: any."""
        with self._lock:
            self.allowed_recipients = None if wa_ids is None else set(wa_ids)

    def expire_token(self) -> None:
        """The access token has expired: every request gets 190 from now on."""
        self.token_expired = True

    def fault(
        self, mode: str, times: int = 1, seconds: float = 0.0, on: str = "any"
    ) -> None:
        """Spoil the next ``times`` requests of kind ``on`` (faults queue up in
        order): ``any``, ``send`` (a message sent), ``read`` (mark as read or
        typing indicator), ``number`` (the phone number read) or ``templates``.

        ``refused`` closes the listener at once for ``seconds`` (``times`` and
        ``on`` do not apply): connections are refused, as when Meta is
        unreachable.
        """
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {mode!r}")
        if on not in REQUEST_KINDS:
            raise ValueError(f"on must be one of {', '.join(sorted(REQUEST_KINDS))}")
        if times < 1 or seconds < 0:
            raise ValueError("times must be positive and seconds not negative")
        if mode == "refused":
            self.refuse_for(seconds)
            return
        with self._fault_lock:
            self._faults.append(_Fault(mode, times, seconds, on))

    # ------------------------------------------------------------ observations

    def count(self, method: str, path_suffix: str = "") -> int:
        """How many recorded requests had ``method`` and a path ending so."""
        with self._lock:
            return sum(
                1
                for entry in self.requests
                if entry["method"] == method.upper()
                and entry["path"].endswith(path_suffix)
            )

    def texts_to(self, wa_id: str) -> list[str]:
        """The bodies of the text messages accepted for ``wa_id``, in order."""
        with self._lock:
            return [
                entry["json"]["text"]["body"]
                for entry in self.sent
                if entry["wa_id"] == wa_id and entry["type"] == "text"
            ]

    def templates_to(self, wa_id: str) -> list[tuple[str, str, list[str]]]:
        """The templates accepted for ``wa_id``: name, language, body texts."""
        with self._lock:
            found = [e["json"] for e in self.sent if e["wa_id"] == wa_id]
        return [
            (
                payload["template"]["name"],
                payload["template"]["language"]["code"],
                [
                    parameter["text"]
                    for component in payload["template"].get("components", [])
                    if component["type"].lower() == "body"
                    for parameter in component.get("parameters", [])
                ],
            )
            for payload in found
            if payload.get("type") == "template"
        ]

    # ---------------------------------------------------------------- handling

    def _answer(self, request: GraphRequest) -> GraphResponse:
        """Record the request, then answer it, spoiled by a pending fault."""
        entry = self._remember(request)
        fault = self._take_fault(_kind(entry))
        if fault is None:
            return self._route(request)
        if fault.mode == "error_500":
            message = (
                "An unexpected error has occurred. Please retry your request later."
            )
            error = graph_error(2, message, is_transient=True)
            return json_response(500, error)
        if fault.mode == "unavailable":
            message = "Service temporarily unavailable"
            return json_response(503, graph_error(2, message, is_transient=True))
        if fault.mode == "rate_limited":
            return json_response(400, whatsapp_error(RATE_LIMIT_HIT))
        if fault.mode == "pair_rate_limited":
            return json_response(400, whatsapp_error(PAIR_RATE_LIMIT_HIT))
        if fault.mode == "token_expired":
            message = "Error validating access token: Session has expired."
            return json_response(401, graph_error(190, message, subcode=463))
        response = self._route(request)
        if fault.mode == "slow":
            response.delay = fault.seconds
        else:  # lost_after
            response.drop = True
        return response

    def _take_fault(self, kind: str) -> _Fault | None:
        """The first pending fault for this kind of request, used once."""
        with self._fault_lock:
            for fault in self._faults:
                if fault.on in ("any", kind):
                    fault.remaining -= 1
                    if fault.remaining == 0:
                        self._faults.remove(fault)
                    return fault
            return None

    def _remember(self, request: GraphRequest) -> dict[str, Any]:
        """Append the request to :attr:`requests` and return its entry."""
        parsed: Any = None
        if request.body:
            try:
                parsed = json.loads(request.body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                parsed = None
        entry = {
            "method": request.method,
            "path": request.path,
            "query": request.query,
            "headers": request.headers,
            "json": parsed,
            "body": request.body,
        }
        with self._lock:
            self.requests.append(entry)
        return entry


def _kind(entry: dict[str, Any]) -> str:
    """Which kind of request a recorded entry is, for :meth:`GraphFake.fault`."""
    path, method = entry["path"].rstrip("/"), entry["method"]
    if method == "POST" and path.endswith("/messages"):
        body = entry["json"]
        return "read" if isinstance(body, dict) and "status" in body else "send"
    if path.endswith("/message_templates"):
        return "templates"
    if method == "GET" and path.count("/") == 2:
        return "number"
    return "other"


def _digits(count: int) -> str:
    """A random id of ``count`` digits, not starting with 0 (Graph ids)."""
    return str(secrets.randbelow(9) + 1) + "".join(
        str(secrets.randbelow(10)) for _ in range(count - 1)
    )


def client_kwargs(headers: dict[str, str]) -> dict[str, str]:
    """A webhook's headers as Django's test client takes them, e.g.
    ``client.post(url, body, **client_kwargs(headers))``."""
    kwargs = {"content_type": headers["Content-Type"]}
    for name, value in headers.items():
        if name.lower() != "content-type":
            kwargs["HTTP_" + name.upper().replace("-", "_")] = value
    return kwargs


def whatsapp_bases_with(fake: GraphFake) -> Any:
    """``override_settings`` listing the fake among ``WHATSAPP_API_BASES``."""
    from django.conf import settings
    from django.test import override_settings

    bases = list(getattr(settings, "WHATSAPP_API_BASES", []))
    return override_settings(WHATSAPP_API_BASES=[*bases, fake.base_url])


@contextmanager
def running_graph_fake(**options: Any) -> Iterator[GraphFake]:
    """A started :class:`GraphFake` listed in settings, for a ``with`` block."""
    fake = GraphFake(**options)
    try:
        with whatsapp_bases_with(fake):
            yield fake
    finally:
        fake.close()


@pytest.fixture
def graph_fake() -> Iterator[GraphFake]:
    """A started fake Graph API whose address the settings allow."""
    with running_graph_fake() as fake:
        yield fake
