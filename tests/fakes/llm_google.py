"""The fake Gemini API: ``POST /{version}/models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse`` (see ``tests.fakes.llm_server``)."""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import urlsplit

from tests.fakes.llm_steps import Reply, Step, arguments_object
from tests.fakes.llm_usage import Counts

PATH = re.compile(
    r"^/[^/]+/models/(?P<model>[^:]+):(?P<method>generateContent|streamGenerateContent)$"
)


def refusal(body: dict[str, Any]) -> str | None:
    """Why the real API would refuse these contents, in its words: a turn of
    function calls that does not come right after a user turn (function responses
    are one), or that is not answered by as many function responses."""
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    for number, content in enumerate(contents):
        calls = _parts_with(content, "functionCall")
        if content.get("role") != "model" or not calls:
            continue
        previous = contents[number - 1] if number else {}
        if previous.get("role") != "user":
            return (
                "Please ensure that function call turn comes immediately after a "
                "user turn or after a function response turn."
            )
        following = contents[number + 1] if number + 1 < len(contents) else {}
        if _parts_with(following, "functionResponse") != calls:
            return (
                "Please ensure that the number of function response parts is equal "
                "to the number of function call parts of the function call turn."
            )
    return None


def _parts_with(content: dict[str, Any], key: str) -> int:
    return sum(1 for part in content.get("parts") or [] if key in part)


def _signature(call_id: str) -> str:
    """The base64 ``thoughtSignature`` the fake attaches to a call."""
    return base64.b64encode(f"sig-{call_id}".encode()).decode("ascii")


def reply(
    step: Step, body: dict[str, Any], number: int, path: str, counts: Counts
) -> Reply:
    match = PATH.match(urlsplit(path).path)
    assert match is not None
    streaming = match["method"] == "streamGenerateContent"
    return _reply(step, body, number, match["model"], streaming, counts)


_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def error_body(status: int) -> dict[str, Any]:
    return {
        "error": {
            "code": status,
            "message": f"fake error {status}",
            "status": _STATUSES.get(status, "UNKNOWN"),
        }
    }


def _chunk(
    model: str,
    number: int,
    parts: list[dict[str, Any]],
    finish_reason: str | None = None,
    counts: Counts | None = None,
) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "content": {"role": "model", "parts": parts},
        "index": 0,
    }
    chunk: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": model,
        "responseId": f"r_{number}",
    }
    if finish_reason is not None:
        candidate["finishReason"] = finish_reason
    if finish_reason is not None and counts is not None:
        # The prompt's count includes its cached part.
        chunk["usageMetadata"] = {
            "promptTokenCount": counts.input,
            "candidatesTokenCount": counts.output,
            "totalTokenCount": counts.input + counts.output,
        }
        if counts.cached:
            chunk["usageMetadata"]["cachedContentTokenCount"] = counts.cached
    return chunk


def _reply(
    step: Step,
    body: dict[str, Any],
    number: int,
    model: str,
    streaming: bool,
    counts: Counts,
) -> Reply:
    finish = "MAX_TOKENS" if step.fault == "max_tokens" else "STOP"
    call_parts = [
        {
            "functionCall": {
                "id": call_id,
                "name": name,
                "args": arguments_object(args),
            },
            "thoughtSignature": _signature(call_id),
        }
        for call_id, name, args in step.tool_calls
    ]
    if not streaming:
        if step.fault in ("cut", "error"):
            return Reply(503, body=error_body(503))
        parts = ([{"text": step.text}] if step.text else []) + call_parts
        return Reply(200, body=_chunk(model, number, parts, finish, counts))

    chunks = [
        _chunk(model, number, [{"text": piece}]) for piece in step.pieces(step.text)
    ]
    if step.fault == "error":
        chunks.append(error_body(503))
    elif step.fault == "cut":
        if call_parts:
            chunks.append(_chunk(model, number, call_parts))
    else:
        chunks.append(_chunk(model, number, call_parts, finish, counts))
    frames = [f"data: {json.dumps(c)}\r\n\r\n" for c in chunks]
    return Reply(200, frames=frames)
