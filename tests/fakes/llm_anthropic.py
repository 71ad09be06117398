"""The fake Anthropic Messages API: ``POST /v1/messages``, JSON, or SSE with
``event:`` lines (see ``tests.fakes.llm_server``)."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.llm_steps import Reply, Step, arguments_object, arguments_text
from tests.fakes.llm_usage import Counts


def refusal(body: dict[str, Any]) -> str | None:
    """Why the real API would refuse these messages, in its words: a text block
    with no text but whitespace, a ``tool_use`` without its ``tool_result`` in the
    next message, or a ``tool_result`` for no ``tool_use`` of the message before."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for message in messages:
        for block in _blocks(message):
            if block.get("type") == "text" and not str(block.get("text")).strip():
                return "messages: text content blocks must contain non-whitespace text"
    for number, message in enumerate(messages):
        previous = messages[number - 1] if number else {}
        used = {
            b.get("id")
            for b in _blocks(previous)
            if previous.get("role") == "assistant" and b.get("type") == "tool_use"
        }
        for block in _blocks(message):
            if block.get("type") == "tool_result" and (
                block.get("tool_use_id") not in used
            ):
                return (
                    f"messages.{number}.content: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each "
                    "`tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message."
                )
        if message.get("role") != "assistant":
            continue
        uses = [b.get("id") for b in _blocks(message) if b.get("type") == "tool_use"]
        following = messages[number + 1] if number + 1 < len(messages) else {}
        answered = {
            b.get("tool_use_id")
            for b in _blocks(following)
            if following.get("role") == "user" and b.get("type") == "tool_result"
        }
        missing = [use for use in uses if use not in answered]
        if missing:
            return (
                f"messages.{number}: `tool_use` ids were found without "
                f"`tool_result` blocks immediately after: {', '.join(missing)}. "
                "Each `tool_use` block must have a corresponding `tool_result` "
                "block in the next message."
            )
    return None


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return (
        [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    )


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(status: int) -> dict[str, Any]:
    error_type = _ERROR_TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    return {
        "type": "error",
        "error": {"type": error_type, "message": f"fake error {status}"},
        "request_id": "req_fake",
    }


def reply(
    step: Step, body: dict[str, Any], number: int, path: str, counts: Counts
) -> Reply:
    model = str(body.get("model", "claude-test"))
    if step.fault == "max_tokens":
        stop_reason = "max_tokens"
    else:
        stop_reason = "tool_use" if step.tool_calls else "end_turn"
    message: dict[str, Any] = {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        # Anthropic's input_tokens leaves out what the cache read or wrote.
        "usage": {
            "input_tokens": counts.input - counts.cached - counts.written,
            "cache_read_input_tokens": counts.cached,
            "cache_creation_input_tokens": counts.written,
            "output_tokens": 1,
        },
    }
    if not body.get("stream"):
        if step.fault in ("cut", "error"):
            return Reply(529, body=error_body(529))
        content: list[dict[str, Any]] = []
        if step.text:
            content.append({"type": "text", "text": step.text})
        for call_id, name, arguments in step.tool_calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": name,
                    "input": arguments_object(arguments),
                }
            )
        message.update(content=content, stop_reason=stop_reason)
        message["usage"]["output_tokens"] = counts.output
        return Reply(200, body=message)

    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    index = 0
    if step.text:
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
        )
        events.extend(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": piece},
            }
            for piece in step.pieces(step.text)
        )
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    for call_id, name, arguments in step.tool_calls:
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": call_id,
                    "name": name,
                    "input": {},
                },
            }
        )
        events.extend(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            }
            for piece in ["", *step.pieces(arguments_text(arguments))]
        )
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    if step.fault == "error":
        events.append(
            {
                "type": "error",
                "error": {"type": "overloaded_error", "message": "Overloaded"},
            }
        )
    else:
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": counts.output},
            }
        )
        if step.fault != "cut":
            events.append({"type": "message_stop"})
    frames = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]
    return Reply(200, frames=frames)
