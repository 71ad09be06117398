"""The OpenAPI 3.1 document of the conversation API v1, served at
``/api/v1/openapi.json``, generated from the models that validate the requests.

Request and answer bodies and the query of a read are the pydantic models of
``agents.schemas``, the ones the views check requests with: their JSON Schemas are
the document's components and parameters, so a change of what the API takes is a
change of the document. What is written here is what no model holds: the paths,
which statuses each operation answers (DESIGN.md's error codes), and the
server-sent events of a streamed turn, which are described, not modelled. The test
suite fuzzes the API against the served document (tests/agents/test_api_fuzz.py).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import get_script_prefix
from django.views.decorators.http import require_GET
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from agents import schemas

JSON = "application/json"
EVENT_STREAM = "text/event-stream"
REF = "#/components/schemas/{model}"

#: The models of the components, and whether each is read (a request) or written.
COMPONENTS: list[tuple[type[BaseModel], JsonSchemaMode]] = [
    (schemas.StartConversation, "validation"),
    (schemas.SendMessage, "validation"),
    (schemas.Conversation, "serialization"),
    (schemas.Message, "serialization"),
    (schemas.Messages, "serialization"),
    (schemas.MessagePage, "serialization"),
    (schemas.Error, "serialization"),
    (schemas.Delta, "serialization"),
    (schemas.Empty, "serialization"),
]

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
        f"The text is longer than {schemas.MAX_TEXT} characters, or the body than "
        "the server takes.",
    ),
    415: ("unsupported_media_type", "The body is not sent as `application/json`."),
    429: (
        "rate_limited",
        "Too many requests this minute; `Retry-After` says in how many seconds "
        "to try again.",
    ),
}

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

#: Each event of a streamed turn: its ``data`` model, and what it means.
EVENTS: list[tuple[str, type[BaseModel], str]] = [
    ("delta", schemas.Delta, "A piece of the reply."),
    (
        "discard",
        schemas.Empty,
        "The text streamed since the last discard is not the reply.",
    ),
    ("message", schemas.Message, "A stored message of the turn."),
    ("error", schemas.Error, "The turn could not be completed."),
    ("done", schemas.Empty, "The end of the stream, always last."),
]

LANGUAGE = {
    "Content-Language": {
        "description": (
            "The conversation's language (`es`, `en`): the member's when known, "
            "else a visitor's (`Accept-Language`), else the agent's. The assistant "
            "answers in it."
        ),
        "schema": {"type": "string"},
    }
}


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


def _json(model: type[BaseModel]) -> dict[str, Any]:
    return {"content": {JSON: {"schema": _ref(model)}}}


def _event_schema() -> dict[str, Any]:
    """One server-sent event as an object of its fields, its ``data`` a JSON text."""
    return {
        "description": "One server-sent event of a streamed turn.",
        "oneOf": [
            {
                "type": "object",
                "description": description,
                "required": ["event", "data"],
                "properties": {
                    "event": {"const": name},
                    "data": {
                        "type": "string",
                        "contentMediaType": JSON,
                        "contentSchema": _ref(data),
                    },
                },
            }
            for name, data, description in EVENTS
        ],
    }


def _components() -> dict[str, Any]:
    _, generated = models_json_schema(COMPONENTS, ref_template=REF)
    found: dict[str, Any] = generated["$defs"]
    found["Event"] = _event_schema()
    return found


def _query(model: type[BaseModel]) -> list[dict[str, Any]]:
    """The query parameters a model declares, each with its field's schema."""
    generated = model.model_json_schema(ref_template=REF)
    required = set(generated.get("required", []))
    parameters = []
    for name, field in generated["properties"].items():
        schema = {k: v for k, v in field.items() if k not in ("title", "description")}
        if schema.get("default", ...) is None:  # absent: not a value to send
            del schema["default"]
        parameters.append(
            {
                "name": name,
                "in": "query",
                "required": name in required,
                "description": field.get("description", ""),
                "schema": schema,
            }
        )
    return parameters


def _errors(*statuses: int, **descriptions: str) -> dict[str, Any]:
    """The documented error answers: the error object with each status's own code
    (``descriptions`` by ``e<status>``: where an operation says more)."""
    answers = {}
    for status in statuses:
        code, description = ERROR_CODES[status]
        answer: dict[str, Any] = {
            "description": descriptions.get(f"e{status}", description),
            "content": {
                JSON: {
                    "schema": {
                        "allOf": [
                            _ref(schemas.Error),
                            {"properties": {"error": {"const": code}}},
                        ]
                    }
                }
            },
        }
        if status == 429:
            answer["headers"] = {
                "Retry-After": {
                    "description": "Seconds until the limit's minute ends.",
                    "required": True,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 60},
                }
            }
        answers[str(status)] = answer
    return answers


def _start() -> dict[str, Any]:
    return {
        "operationId": "startConversation",
        "summary": "Start a conversation with an agent.",
        "security": [],
        "parameters": [
            {
                "name": "Accept-Language",
                "in": "header",
                "required": False,
                "description": (
                    "A visitor's language (the widget sends its page's): the "
                    "conversation is held in the first that Gymnasia speaks, unless "
                    "the member's is known; without one, the agent's."
                ),
                "schema": {"type": "string"},
            }
        ],
        "requestBody": {"required": True, **_json(schemas.StartConversation)},
        "responses": {
            "201": {
                "description": "Started: the conversation and its bearer token.",
                "headers": LANGUAGE,
                **_json(schemas.Conversation),
            },
            **_errors(
                400,
                401,
                404,
                413,
                415,
                429,
                e401="The identity token is not valid for this agent.",
                e413="The body is longer than the server takes.",
            ),
        },
    }


def _send() -> dict[str, Any]:
    return {
        "operationId": "sendMessage",
        "summary": "Send the member's message; the assistant answers.",
        "description": (
            "With `Accept: text/event-stream` the turn streams as server-sent "
            "events; otherwise the answer comes when the turn is over. When the "
            "model cannot be reached the turn still answers 200, with a `notice` "
            "and the member's message kept."
        ),
        "security": [{"bearer": []}],
        "requestBody": {"required": True, **_json(schemas.SendMessage)},
        "responses": {
            "200": {
                "description": (
                    "The turn: the member's message, then the notices and the "
                    "assistant message it added, in order.\n\n" + EVENTS_DESCRIPTION
                ),
                "headers": LANGUAGE,
                "content": {
                    JSON: {"schema": _ref(schemas.Messages)},
                    EVENT_STREAM: {"schema": {"$ref": REF.format(model="Event")}},
                },
            },
            **_errors(400, 401, 403, 413, 415, 429),
        },
    }


def _read() -> dict[str, Any]:
    return {
        "operationId": "listMessages",
        "summary": "Read the conversation's messages, oldest first.",
        "description": (
            "Messages added later (approval outcomes, staff notes) appear here too."
        ),
        "security": [{"bearer": []}],
        "parameters": _query(schemas.MessagePageQuery),
        "responses": {
            "200": {
                "description": "A page of the messages, oldest first.",
                "headers": LANGUAGE,
                **_json(schemas.MessagePage),
            },
            **_errors(
                400,
                401,
                403,
                429,
                e400=(
                    "`after` or `before` is not a message id, both are given, or "
                    "`limit` is out of range."
                ),
            ),
        },
    }


DESCRIPTION = (
    "Talk with a gym's AI assistant: start a conversation with an agent, send the "
    "member's messages, read the conversation back. JSON in and out; errors are "
    '`{"error": "<code>", "detail": "<human text>"}`. Rate limits allow at least '
    "20 messages a minute in one conversation and at least 60 new conversations a "
    "minute from one address."
)


def openapi_document(*, server_url: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the conversation API v1, served from
    ``server_url`` (an absolute URL without a trailing slash)."""
    conversation_id = {
        "name": "conversation_id",
        "in": "path",
        "required": True,
        "description": "The conversation's id, as the start answered it.",
        "schema": {"type": "string"},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Gymnasia conversation API",
            "version": "1",
            "description": DESCRIPTION,
        },
        "servers": [{"url": server_url}],
        "paths": {
            "/api/v1/conversations": {"post": _start()},
            "/api/v1/conversations/{conversation_id}/messages": {
                "parameters": [conversation_id],
                "post": _send(),
                "get": _read(),
            },
        },
        "components": {
            "schemas": _components(),
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
