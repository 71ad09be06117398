"""Meta's Graph API, as the WhatsApp channel uses it: the number's details (the
owner's test) and ``POST /{phone-number-id}/messages`` (a text or a template).

What is known about delivery decides what may be done again (R6):

- the connection was refused or never made: ``NotSent`` (it provably did not
  arrive; a send may be tried again);
- Meta answered with an error (a 4xx, with its code: outside the 24 hours,
  template missing or paused, number not on WhatsApp, rate limited):
  ``Refused`` (Meta did not accept it);
- the request went out and no answer came, or a 5xx came back: ``Unknown``
  (it may have been accepted: never sent again blindly).

The access token travels only in the ``Authorization`` header and only to an
address of ``WHATSAPP_API_BASES``; no message of this module carries it.
"""

from __future__ import annotations

from typing import Any

import httpx
from django.conf import settings

from tools.integrations.addresses import destination_allowed

#: The Graph API version every request names (Meta keeps each for two years).
GRAPH_API_VERSION = "v23.0"
TIMEOUT_SECONDS = 10.0
CONNECT_TIMEOUT_SECONDS = 3.0
#: The number's details the owner's test reads.
PHONE_FIELDS = "display_phone_number,verified_name,quality_rating"


class GraphError(Exception):
    """A request to the Graph API that did not succeed; ``words`` for people."""

    def __init__(self, words: str, code: int | None = None) -> None:
        super().__init__(words)
        self.words = words
        self.code = code


class NotSent(GraphError):
    """The request provably did not reach Meta (refused connection, an address
    this installation does not allow)."""


class Refused(GraphError):
    """Meta answered with an error: the request was not accepted."""


class Unknown(GraphError):
    """Sent, and no usable answer came back: it may have been accepted."""


def _refusal(response: httpx.Response) -> Refused:
    """Meta's error answer (``{"error": {"code", "message", "error_data"}}``)."""
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    code = error.get("code")
    title = str(error.get("message") or f"HTTP {response.status_code}")[:300]
    return Refused(title, code if isinstance(code, int) else None)


class GraphClient:
    """One channel's requests to the Graph API."""

    def __init__(self, *, base_url: str, phone_number_id: str, access_token: str):
        self._base = base_url.rstrip("/")
        self._phone_number_id = phone_number_id
        self._token = access_token

    def __repr__(self) -> str:
        return f"GraphClient(base_url={self._base!r}, phone={self._phone_number_id!r})"

    def _request(
        self, method: str, path: str, *, json: Any = None, params: Any = None
    ) -> dict[str, Any]:
        if not destination_allowed(self._base, settings.WHATSAPP_API_BASES):
            raise NotSent("the Graph API address is not one this installation allows")
        url = f"{self._base}/{GRAPH_API_VERSION}/{path}"
        timeout = httpx.Timeout(TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS)
        headers = {"Authorization": f"Bearer {self._token}"}
        try:
            response = httpx.request(
                method, url, json=json, params=params, headers=headers, timeout=timeout
            )
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise NotSent("Meta's Graph API could not be reached") from None
        except httpx.HTTPError:
            raise Unknown("Meta's Graph API did not answer") from None
        if response.status_code >= 500:
            raise Unknown(f"Meta's Graph API failed (HTTP {response.status_code})")
        if response.status_code >= 400:
            raise _refusal(response)
        try:
            answer = response.json()
        except ValueError:
            raise Unknown("the answer was not the Graph API's") from None
        if not isinstance(answer, dict):
            raise Unknown("the answer was not the Graph API's")
        return answer

    def phone_number(self) -> dict[str, Any]:
        """The number's details: ``display_phone_number``, ``verified_name``…"""
        return self._request(
            "GET", self._phone_number_id, params={"fields": PHONE_FIELDS}
        )

    def _send(self, to: str, message: dict[str, Any]) -> str:
        """Send one message; its ``wamid`` once Meta accepted it."""
        body = {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": to.lstrip("+"),
            **message,
        }
        answer = self._request("POST", f"{self._phone_number_id}/messages", json=body)
        try:
            return str(answer["messages"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise Unknown("the answer named no message") from None

    def send_text(self, *, to: str, text: str) -> str:
        return self._send(
            to, {"type": "text", "text": {"preview_url": False, "body": text}}
        )

    def send_template(
        self, *, to: str, name: str, language: str, parameters: list[str]
    ) -> str:
        components = [
            {
                "type": "body",
                "parameters": [{"type": "text", "text": p} for p in parameters],
            }
        ]
        template: dict[str, Any] = {"name": name, "language": {"code": language}}
        if parameters:
            template["components"] = components
        return self._send(to, {"type": "template", "template": template})
