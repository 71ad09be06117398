"""The OpenAPI 3.1 document of the conversation API v1, served at
``/api/v1/openapi.json``.

It states the contract of DESIGN.md ("Public interfaces") in a form tools read: gyms
generate clients from it, and the test suite fuzzes the API against it
(tests/agents/test_api_fuzz.py), so a drift between the contract, this document and
``agents.api`` shows up as a failing test rather than as a surprised client. Limits
come from ``agents.api`` so the document cannot disagree with the code on them.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import get_script_prefix
from django.views.decorators.http import require_GET

from agents.api import MAX_TEXT, PAGE_DEFAULT, PAGE_MAX

JSON = "application/json"
EVENT_STREAM = "text/event-stream"

#: The error code each HTTP status carries (DESIGN.md: error codes).
ERROR_CODES: dict[int, tuple[str, str]] = {
    400: ("bad_request", "The body or a parameter is not what the operation takes."),
    401: ("unauthorized", "The token is missing, malformed, forged or expired."),
    403: (
        "forbidden",
        "A valid token of another conversation, whether or not the id exists.",
    ),
    404: ("not_found", "No agent has that public key."),
    413: (
        "too_long",
        f"The text is longer than {MAX_TEXT} characters, or the body than the "
        "server takes.",
    ),
    415: (
        "unsupported_media_type",
        "The body is not sent as `application/json`.",
    ),
    429: (
        "rate_limited",
        "Too many requests this minute; `Retry-After` says in how many seconds "
        "to try again.",
    ),
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _error_response(status: int, description: str | None = None) -> dict[str, Any]:
    """A documented error answer: the error object with this status's own code."""
    code, default_description = ERROR_CODES[status]
    retry = (
        {
            "headers": {
                "Retry-After": {
                    "description": "Seconds until the limit's minute ends.",
                    "required": True,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 60},
                }
            }
        }
        if status == 429
        else {}
    )
    return {
        **retry,
        "description": description or default_description,
        "content": {
            JSON: {
                "schema": {
                    "allOf": [
                        _ref("Error"),
                        {"properties": {"error": {"const": code}}},
                    ]
                }
            }
        },
    }


def _event(name: str, data: dict[str, Any], description: str) -> dict[str, Any]:
    """One server-sent event as an object of its fields, its ``data`` a JSON text."""
    return {
        "type": "object",
        "description": description,
        "required": ["event", "data"],
        "properties": {
            "event": {"const": name},
            "data": {
                "type": "string",
                "contentMediaType": JSON,
                "contentSchema": data,
            },
        },
    }


EMPTY_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": False}

EVENTS_DESCRIPTION = """\
Each event is an `event:` line naming it and one `data:` line of JSON:

- `delta` `{"text": "<piece>"}`: a piece of the reply; the verdict sentence, when \
due, is the first delta of a step.
- `discard` `{}`: the text streamed since the last `discard` belonged to a step that \
went on to call tools and is not part of the reply (remove it, or show it as a \
passing status).
- `message`: a stored message object, sent for every message of the turn once stored.
- `error` `{"error", "detail"}`: the turn could not be completed as asked.
- `done` `{}`: last, always.

The reply's text equals the deltas after the last `discard`. (The schema describes \
one event, with its fields as properties, as OpenAPI 3.2's `itemSchema` does.)"""


def _schemas() -> dict[str, Any]:
    return {
        "StartConversation": {
            "type": "object",
            "required": ["agent"],
            "properties": {
                "agent": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The agent's public key.",
                },
                "identity_token": {
                    "type": "string",
                    "minLength": 1,
                    "description": (
                        "A JWT from the gym's backend naming the member (HS256, "
                        "signed with the agent's identity secret; claims `sub`, "
                        "`aud` = the agent's public key, `exp` at most one hour "
                        "ahead, optional `name` and `email`). Without it the "
                        "conversation is an anonymous visitor's; an invalid one is "
                        "refused (401), never downgraded."
                    ),
                },
            },
        },
        "Conversation": {
            "type": "object",
            "required": ["conversation", "token", "expires_at", "member"],
            "additionalProperties": False,
            "properties": {
                "conversation": {
                    "type": "string",
                    "description": "The conversation's id.",
                },
                "token": {
                    "type": "string",
                    "description": "The bearer token of this conversation only.",
                },
                "expires_at": {
                    "type": "string",
                    "format": "date-time",
                    "description": "When the token stops being accepted.",
                },
                "member": {
                    "type": ["string", "null"],
                    "description": (
                        "The member's external id at the gym, or null for an "
                        "anonymous visitor."
                    ),
                },
            },
        },
        "SendMessage": {
            "type": "object",
            "required": ["text"],
            "properties": {
                "text": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_TEXT,
                    "description": (
                        f"The member's message, 1 to {MAX_TEXT} characters; a "
                        f"blank text is a bad request (400), a longer one is too "
                        f"long (413)."
                    ),
                },
            },
        },
        "Message": {
            "type": "object",
            "required": ["id", "role", "text", "created_at"],
            "additionalProperties": False,
            "properties": {
                "id": {
                    "type": "string",
                    "description": (
                        "Opaque; pass it back as `after` to read what came later."
                    ),
                },
                "role": {"type": "string", "enum": ["member", "assistant", "notice"]},
                "text": {"type": "string"},
                "created_at": {"type": "string", "format": "date-time"},
            },
        },
        "Messages": {
            "type": "object",
            "required": ["messages"],
            "additionalProperties": False,
            "properties": {"messages": {"type": "array", "items": _ref("Message")}},
        },
        "MessagePage": {
            "type": "object",
            "required": ["messages", "more"],
            "additionalProperties": False,
            "properties": {
                "messages": {"type": "array", "items": _ref("Message")},
                "more": {
                    "type": "boolean",
                    "description": (
                        "Whether more messages lie beyond this page: later ones "
                        "with `after`, earlier ones otherwise."
                    ),
                },
            },
        },
        "Error": {
            "type": "object",
            "required": ["error", "detail"],
            "additionalProperties": False,
            "properties": {
                "error": {"type": "string", "description": "A stable code."},
                "detail": {"type": "string", "description": "Human text."},
            },
        },
        "Event": {
            "description": "One server-sent event of a streamed turn.",
            "oneOf": [
                _event(
                    "delta",
                    {
                        "type": "object",
                        "required": ["text"],
                        "additionalProperties": False,
                        "properties": {"text": {"type": "string"}},
                    },
                    "A piece of the reply.",
                ),
                _event(
                    "discard",
                    EMPTY_OBJECT,
                    "The text streamed since the last discard is not the reply.",
                ),
                _event("message", _ref("Message"), "A stored message of the turn."),
                _event("error", _ref("Error"), "The turn could not be completed."),
                _event("done", EMPTY_OBJECT, "The end of the stream, always last."),
            ],
        },
    }


def openapi_document(*, server_url: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the conversation API v1, served from
    ``server_url`` (an absolute URL without a trailing slash)."""
    bearer: list[dict[str, list[str]]] = [{"bearer": []}]
    conversation_id = {
        "name": "conversation_id",
        "in": "path",
        "required": True,
        "description": "The conversation's id, as the start answered it.",
        "schema": {"type": "string"},
    }
    language = {
        "Content-Language": {
            "description": (
                "The conversation's language (`es`, `en`): the member's when "
                "known, else the agent's. The assistant answers in it."
            ),
            "schema": {"type": "string"},
        }
    }
    messages_200 = {
        "description": "A page of the messages, oldest first.",
        "headers": language,
        "content": {JSON: {"schema": _ref("MessagePage")}},
    }
    message_id = {"type": "string", "pattern": "^[0-9]{1,18}$"}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Gymnasia conversation API",
            "version": "1",
            "description": (
                "Talk with a gym's AI assistant: start a conversation with an agent, "
                "send the member's messages, read the conversation back. JSON in "
                'and out; errors are `{"error": "<code>", "detail": '
                '"<human text>"}`. Rate limits allow at least 20 messages a '
                "minute in one conversation and at least 60 new conversations a "
                "minute from one address."
            ),
        },
        "servers": [{"url": server_url}],
        "paths": {
            "/api/v1/conversations": {
                "post": {
                    "operationId": "startConversation",
                    "summary": "Start a conversation with an agent.",
                    "security": [],
                    "requestBody": {
                        "required": True,
                        "content": {JSON: {"schema": _ref("StartConversation")}},
                    },
                    "responses": {
                        "201": {
                            "description": (
                                "Started: the conversation and its bearer token."
                            ),
                            "headers": language,
                            "content": {JSON: {"schema": _ref("Conversation")}},
                        },
                        "400": _error_response(400),
                        "401": _error_response(
                            401, "The identity token is not valid for this agent."
                        ),
                        "404": _error_response(404),
                        "413": _error_response(
                            413, "The body is longer than the server takes."
                        ),
                        "415": _error_response(415),
                        "429": _error_response(429),
                    },
                }
            },
            "/api/v1/conversations/{conversation_id}/messages": {
                "parameters": [conversation_id],
                "post": {
                    "operationId": "sendMessage",
                    "summary": "Send the member's message; the assistant answers.",
                    "description": (
                        "With `Accept: text/event-stream` the turn streams as "
                        "server-sent events; otherwise the answer comes when the "
                        "turn is over. When the model cannot be reached the turn "
                        "still answers 200, with a `notice` and the member's "
                        "message kept."
                    ),
                    "security": bearer,
                    "requestBody": {
                        "required": True,
                        "content": {JSON: {"schema": _ref("SendMessage")}},
                    },
                    "responses": {
                        "200": {
                            "description": (
                                "The turn: the member's message, then the notices "
                                "and the assistant message it added, in order.\n\n"
                                + EVENTS_DESCRIPTION
                            ),
                            "headers": language,
                            "content": {
                                JSON: {"schema": _ref("Messages")},
                                EVENT_STREAM: {"schema": _ref("Event")},
                            },
                        },
                        "400": _error_response(400),
                        "401": _error_response(401),
                        "403": _error_response(403),
                        "413": _error_response(413),
                        "415": _error_response(415),
                        "429": _error_response(429),
                    },
                },
                "get": {
                    "operationId": "listMessages",
                    "summary": "Read the conversation's messages, oldest first.",
                    "description": (
                        "Messages added later (approval outcomes, staff notes) "
                        "appear here too."
                    ),
                    "security": bearer,
                    "parameters": [
                        {
                            "name": "after",
                            "in": "query",
                            "required": False,
                            "description": (
                                "A message id: the messages created after it."
                            ),
                            "schema": message_id,
                        },
                        {
                            "name": "before",
                            "in": "query",
                            "required": False,
                            "description": (
                                "A message id: the page just before it (not with "
                                "`after`). With neither, the newest page."
                            ),
                            "schema": message_id,
                        },
                        {
                            "name": "limit",
                            "in": "query",
                            "required": False,
                            "description": "Messages a page holds at most.",
                            "schema": {
                                "type": "integer",
                                "minimum": 1,
                                "maximum": PAGE_MAX,
                                "default": PAGE_DEFAULT,
                            },
                        },
                    ],
                    "responses": {
                        "200": messages_200,
                        "400": _error_response(
                            400,
                            "`after` or `before` is not a message id, both are "
                            "given, or `limit` is out of range.",
                        ),
                        "401": _error_response(401),
                        "403": _error_response(403),
                        "429": _error_response(429),
                    },
                },
            },
        },
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": (
                        "The token the start answered; it opens that conversation only."
                    ),
                }
            },
        },
    }


@require_GET
def openapi(request: HttpRequest) -> JsonResponse:
    """``GET /api/v1/openapi.json``: the document, with this site as its server."""
    server_url = request.build_absolute_uri(get_script_prefix()).rstrip("/")
    return JsonResponse(openapi_document(server_url=server_url))
