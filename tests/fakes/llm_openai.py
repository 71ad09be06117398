"""The fake OpenAI Responses API: ``POST /v1/responses``, JSON, or SSE when
``"stream": true`` (see ``tests.fakes.llm_server``)."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.llm_steps import Reply, Step, arguments_text
from tests.fakes.llm_usage import Counts


def refusal(body: dict[str, Any]) -> str | None:
    """Why the real API would refuse this input, in its words: a function call
    with no output, or an output for no call."""
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    calls = [i.get("call_id") for i in items if i.get("type") == "function_call"]
    outputs = [
        i.get("call_id") for i in items if i.get("type") == "function_call_output"
    ]
    for call_id in calls:
        if call_id not in outputs:
            return f"No tool output found for function call {call_id}."
    for call_id in outputs:
        if call_id not in calls:
            return (
                f"No tool call found for function call output with call_id {call_id}."
            )
    return None


def error_body(status: int) -> dict[str, Any]:
    kinds = {
        400: ("invalid_request_error", "invalid_value"),
        401: ("invalid_request_error", "invalid_api_key"),
        429: ("rate_limit_exceeded", "rate_limit_exceeded"),
    }
    error_type, code = kinds.get(
        status, ("server_error", "server_error") if status >= 500 else ("error", None)
    )
    return {
        "error": {
            "message": f"fake error {status}",
            "type": error_type,
            "param": None,
            "code": code,
        }
    }


def _response(
    number: int,
    model: str,
    output: list[dict[str, Any]],
    status: str,
    counts: Counts | None = None,
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 1700000000,
        "model": model,
        "status": status,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    if status == "incomplete":
        response["incomplete_details"] = {"reason": "max_output_tokens"}
    if counts is not None:
        response["usage"] = {
            "input_tokens": counts.input,
            "input_tokens_details": {"cached_tokens": counts.cached},
            "output_tokens": counts.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": counts.input + counts.output,
        }
    return response


def _items(step: Step) -> list[dict[str, Any]]:
    """The completed output items of a step: a message, then function calls."""
    items: list[dict[str, Any]] = []
    if step.text:
        items.append(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": step.text, "annotations": []}
                ],
            }
        )
    for number, (call_id, name, arguments) in enumerate(step.tool_calls, start=1):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{number}",
                "call_id": call_id,
                "name": name,
                "arguments": arguments_text(arguments),
                "status": "completed",
            }
        )
    return items


def reply(
    step: Step, body: dict[str, Any], number: int, path: str, counts: Counts
) -> Reply:
    model = str(body.get("model", "gpt-test"))
    items = _items(step)
    final_status = "incomplete" if step.fault == "max_tokens" else "completed"
    if not body.get("stream"):
        if step.fault in ("cut", "error"):
            return Reply(500, body=error_body(500))
        return Reply(200, body=_response(number, model, items, final_status, counts))

    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "response": _response(number, model, [], "in_progress"),
        }
    ]
    for index, item in enumerate(items):
        if item["type"] == "message":
            events.extend(_message_events(index, item, step))
        else:
            events.extend(_call_events(index, item, step))
    if step.fault == "error" and step.error_code:
        failed = _response(number, model, [], "failed")
        failed["error"] = {"code": step.error_code, "message": "fake failure"}
        events.append({"type": "response.failed", "response": failed})
    elif step.fault == "error":
        events.append(
            {
                "type": "error",
                "code": "server_error",
                "message": "fake error",
                "param": None,
            }
        )
    elif step.fault == "max_tokens":
        events.append(
            {
                "type": "response.incomplete",
                "response": _response(number, model, items, "incomplete"),
            }
        )
    elif step.fault != "cut":
        events.append(
            {
                "type": "response.completed",
                "response": _response(number, model, items, "completed", counts),
            }
        )
    frames = []
    for sequence, event in enumerate(events):
        event["sequence_number"] = sequence
        frames.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    return Reply(200, frames=frames)


def _message_events(
    index: int, item: dict[str, Any], step: Step
) -> list[dict[str, Any]]:
    text = item["content"][0]["text"]
    where = {"item_id": item["id"], "output_index": index, "content_index": 0}
    empty_part = {"type": "output_text", "text": "", "annotations": []}
    return [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "status": "in_progress", "content": []},
        },
        {"type": "response.content_part.added", **where, "part": empty_part},
        *(
            {
                "type": "response.output_text.delta",
                **where,
                "delta": piece,
                "logprobs": [],
            }
            for piece in step.pieces(text)
        ),
        {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **where, "part": item["content"][0]},
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def _call_events(index: int, item: dict[str, Any], step: Step) -> list[dict[str, Any]]:
    where = {"item_id": item["id"], "output_index": index}
    return [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "arguments": "", "status": "in_progress"},
        },
        *(
            {"type": "response.function_call_arguments.delta", **where, "delta": piece}
            for piece in step.pieces(item["arguments"])
        ),
        {
            "type": "response.function_call_arguments.done",
            **where,
            "arguments": item["arguments"],
        },
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]
