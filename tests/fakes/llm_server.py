"""A local stand-in for the three LLM APIs the provider adapters talk to.

Why: the adapters must be tested through the real SDK clients (their request
building, SSE parsing, error classes and timeouts) without reaching the internet.
This module serves the minimal wire formats those SDKs accept, on loopback, from a
background thread:

- OpenAI Responses: ``POST /v1/responses`` (JSON, or SSE when ``"stream": true``);
- Anthropic Messages: ``POST /v1/messages`` (JSON, or SSE with ``event:`` lines);
- Gemini: ``POST /{version}/models/{model}:generateContent`` and
  ``:streamGenerateContent?alt=sse``.

What: a test scripts each provider's answers as :class:`Step` values (text, tool
calls, a fault or an HTTP error status) or as a function of the request body, and
reads back every request the fake received, with credentials redacted.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

__all__ = [
    "PROVIDERS",
    "FakeLLM",
    "RecordedRequest",
    "Step",
    "running_fake_llm",
]

Provider: TypeAlias = Literal["openai", "anthropic", "google"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "google")

Arguments: TypeAlias = dict[str, Any] | str
"""Tool call arguments: an object, or a raw string (possibly not valid JSON)."""

_HOST = "127.0.0.1"
_REDACTED = "<redacted>"
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})
_GOOGLE_PATH = re.compile(
    r"^/[^/]+/models/(?P<model>[^:]+):(?P<method>generateContent|streamGenerateContent)$"
)
_FAULTS = frozenset({"cut", "error", "max_tokens", "stall"})


@dataclass(frozen=True)
class Step:
    """One scripted answer of a provider.

    ``text`` and each tool call's arguments are streamed in pieces of ``chunk``
    characters, or cut at the offsets ``cuts`` when given. ``tool_calls`` are ``(call_id, name, arguments)``. ``fault`` is
    ``"cut"`` (the stream stops before its terminal event), ``"error"`` (the
    provider's mid-stream error event), ``"max_tokens"`` (the provider's
    truncation reason) or ``"stall"`` (a streamed answer sends what ``"cut"``
    sends, then holds the connection open for ``delay`` seconds). ``status`` answers that HTTP status with the provider's
    error body instead. ``headers`` are added to the response, ``delay`` seconds
    pass before anything is written (after the partial stream for ``"stall"``).
    """

    text: str = ""
    tool_calls: Sequence[tuple[str, str, Arguments]] = field(default_factory=list)
    fault: str | None = None
    status: int | None = None
    headers: dict[str, str] | None = None
    delay: float = 0.0
    chunk: int = 8
    cuts: tuple[int, ...] = ()

    def pieces(self, text: str) -> list[str]:
        """``text`` as this step streams it (no piece for empty text)."""
        if not self.cuts:
            return [text[i : i + self.chunk] for i in range(0, len(text), self.chunk)]
        bounds = [0, *sorted({c for c in self.cuts if 0 < c < len(text)}), len(text)]
        return [text[a:b] for a, b in itertools.pairwise(bounds) if a < b]

    def __post_init__(self) -> None:
        if self.fault is not None and self.fault not in _FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}")
        if self.chunk < 1:
            raise ValueError("chunk must be at least 1")


Script: TypeAlias = Callable[[dict[str, Any]], Step]


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the fake received it: path (with query), headers, JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def _arguments_text(arguments: Arguments) -> str:
    """Arguments as the JSON text a provider streams; raw strings stay as they are."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


def _arguments_object(arguments: Arguments) -> Any:
    """Arguments as an object, for formats that carry objects (Anthropic's
    non-streamed ``input``, Gemini's ``args``). A string that is not JSON is sent
    as an empty object there: those formats cannot carry malformed JSON."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return {}


def _signature(call_id: str) -> str:
    """The base64 ``thoughtSignature`` the Gemini fake attaches to a call."""
    return base64.b64encode(f"sig-{call_id}".encode()).decode("ascii")


@dataclass
class _Reply:
    """What the handler writes: a status, headers, and either one JSON body or a
    list of SSE frames (already formatted) for a streamed answer."""

    status: int
    body: dict[str, Any] | None = None
    frames: list[str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stall: float = 0.0


# --- OpenAI Responses --------------------------------------------------------


def _openai_error_body(status: int) -> dict[str, Any]:
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


def _openai_response(
    number: int, model: str, output: list[dict[str, Any]], status: str
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
    return response


def _openai_items(step: Step) -> list[dict[str, Any]]:
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
                "arguments": _arguments_text(arguments),
                "status": "completed",
            }
        )
    return items


def _openai_reply(step: Step, body: dict[str, Any], number: int) -> _Reply:
    model = str(body.get("model", "gpt-test"))
    items = _openai_items(step)
    final_status = "incomplete" if step.fault == "max_tokens" else "completed"
    if not body.get("stream"):
        if step.fault in ("cut", "error"):
            return _Reply(500, body=_openai_error_body(500))
        return _Reply(200, body=_openai_response(number, model, items, final_status))

    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "response": _openai_response(number, model, [], "in_progress"),
        }
    ]
    for index, item in enumerate(items):
        if item["type"] == "message":
            events.extend(_openai_message_events(index, item, step))
        else:
            events.extend(_openai_call_events(index, item, step))
    if step.fault == "error":
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
                "response": _openai_response(number, model, items, "incomplete"),
            }
        )
    elif step.fault != "cut":
        events.append(
            {
                "type": "response.completed",
                "response": _openai_response(number, model, items, "completed"),
            }
        )
    frames = []
    for sequence, event in enumerate(events):
        event["sequence_number"] = sequence
        frames.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    return _Reply(200, frames=frames)


def _openai_message_events(
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


def _openai_call_events(
    index: int, item: dict[str, Any], step: Step
) -> list[dict[str, Any]]:
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


# --- Anthropic Messages ------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def _anthropic_error_body(status: int) -> dict[str, Any]:
    error_type = _ANTHROPIC_ERROR_TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    return {
        "type": "error",
        "error": {"type": error_type, "message": f"fake error {status}"},
        "request_id": "req_fake",
    }


def _anthropic_reply(step: Step, body: dict[str, Any], number: int) -> _Reply:
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
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    if not body.get("stream"):
        if step.fault in ("cut", "error"):
            return _Reply(529, body=_anthropic_error_body(529))
        content: list[dict[str, Any]] = []
        if step.text:
            content.append({"type": "text", "text": step.text})
        for call_id, name, arguments in step.tool_calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": name,
                    "input": _arguments_object(arguments),
                }
            )
        message.update(content=content, stop_reason=stop_reason)
        message["usage"]["output_tokens"] = 20
        return _Reply(200, body=message)

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
            for piece in ["", *step.pieces(_arguments_text(arguments))]
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
                "usage": {"output_tokens": 20},
            }
        )
        if step.fault != "cut":
            events.append({"type": "message_stop"})
    frames = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]
    return _Reply(200, frames=frames)


# --- Gemini generateContent --------------------------------------------------

_GOOGLE_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _google_error_body(status: int) -> dict[str, Any]:
    return {
        "error": {
            "code": status,
            "message": f"fake error {status}",
            "status": _GOOGLE_STATUSES.get(status, "UNKNOWN"),
        }
    }


def _google_chunk(
    model: str,
    number: int,
    parts: list[dict[str, Any]],
    finish_reason: str | None = None,
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
        chunk["usageMetadata"] = {
            "promptTokenCount": 10,
            "candidatesTokenCount": 5,
            "totalTokenCount": 15,
        }
    return chunk


def _google_reply(
    step: Step, body: dict[str, Any], number: int, model: str, streaming: bool
) -> _Reply:
    finish = "MAX_TOKENS" if step.fault == "max_tokens" else "STOP"
    call_parts = [
        {
            "functionCall": {
                "id": call_id,
                "name": name,
                "args": _arguments_object(args),
            },
            "thoughtSignature": _signature(call_id),
        }
        for call_id, name, args in step.tool_calls
    ]
    if not streaming:
        if step.fault in ("cut", "error"):
            return _Reply(503, body=_google_error_body(503))
        parts = ([{"text": step.text}] if step.text else []) + call_parts
        return _Reply(200, body=_google_chunk(model, number, parts, finish))

    chunks = [
        _google_chunk(model, number, [{"text": piece}])
        for piece in step.pieces(step.text)
    ]
    if step.fault == "error":
        chunks.append(_google_error_body(503))
    elif step.fault == "cut":
        if call_parts:
            chunks.append(_google_chunk(model, number, call_parts))
    else:
        chunks.append(_google_chunk(model, number, call_parts, finish))
    frames = [f"data: {json.dumps(c)}\r\n\r\n" for c in chunks]
    return _Reply(200, frames=frames)


# --- The server --------------------------------------------------------------


class FakeLLM:
    """An HTTP server on loopback that answers as OpenAI, Anthropic and Gemini.

    ``script(provider, steps)`` queues answers (consumed in order); a callable
    instead answers every request from its parsed body. A request with nothing
    scripted gets an HTTP 500 in that provider's error format. ``requests``
    holds what each provider received. All of it is safe to use from any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: dict[str, deque[Step]] = {p: deque() for p in PROVIDERS}
        self._scripts: dict[str, Script | None] = dict.fromkeys(PROVIDERS)
        self._requests: dict[str, list[RecordedRequest]] = {p: [] for p in PROVIDERS}
        self._counter = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> None:
        """Listen on a free port of 127.0.0.1 and serve from a daemon thread."""
        if self._server is not None:
            return
        fake = self

        class Handler(_Handler):
            owner = fake

        server = ThreadingHTTPServer((_HOST, 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-llm",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``; OpenAI clients need this plus ``/v1``."""
        if self._server is None:
            raise RuntimeError("the fake LLM server is not running")
        return f"http://{_HOST}:{self._server.server_address[1]}"

    # scripting

    def script(self, provider: str, steps: list[Step] | Script) -> None:
        """Queue ``steps`` for ``provider``, or answer it with a function of the
        request body from now on."""
        if provider not in PROVIDERS:
            raise ValueError(f"unknown provider {provider!r}")
        with self._lock:
            if callable(steps):
                self._scripts[provider] = steps
            else:
                self._scripts[provider] = None
                self._steps[provider].extend(steps)

    def reset(self) -> None:
        """Forget every script and every recorded request."""
        with self._lock:
            for provider in PROVIDERS:
                self._steps[provider].clear()
                self._scripts[provider] = None
                self._requests[provider].clear()

    @property
    def requests(self) -> dict[str, list[RecordedRequest]]:
        """A snapshot of the requests received so far, per provider."""
        with self._lock:
            return {p: list(records) for p, records in self._requests.items()}

    # request handling (called from handler threads)

    def _answer(self, provider: Provider, record: RecordedRequest) -> _Reply:
        refused = _unanswered_call(provider, record.body)
        if refused is not None:
            # As the real APIs do: the request is refused and no step is used.
            with self._lock:
                self._requests[provider].append(record)
            return _refusal(provider, refused)
        with self._lock:
            self._requests[provider].append(record)
            self._counter += 1
            number = self._counter
            script = self._scripts[provider]
            queued = self._steps[provider]
            step = queued.popleft() if script is None and queued else None
        if script is not None:
            step = script(record.body)
        if step is None:
            return _error_reply(provider, 500, Step())
        if step.status is not None:
            return _error_reply(provider, step.status, step)
        shape = replace(step, fault="cut") if step.fault == "stall" else step
        if provider == "openai":
            reply = _openai_reply(shape, record.body, number)
        elif provider == "anthropic":
            reply = _anthropic_reply(shape, record.body, number)
        else:
            match = _GOOGLE_PATH.match(urlsplit(record.path).path)
            assert match is not None
            streaming = match["method"] == "streamGenerateContent"
            reply = _google_reply(shape, record.body, number, match["model"], streaming)
        reply.headers.update(step.headers or {})
        if step.fault == "stall" and reply.frames is not None:
            reply.stall = step.delay
        else:
            reply.delay = step.delay
        return reply


def _unanswered_call(provider: Provider, body: dict[str, Any]) -> str | None:
    """Why a real API would refuse this history: a tool call without its result
    right after it, or a result for no call (in the API's own words), else None."""
    if provider == "openai":
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
                    f"No tool call found for function call output with call_id "
                    f"{call_id}."
                )
        return None
    if provider == "anthropic":
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
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
            uses = [
                b.get("id") for b in _blocks(message) if b.get("type") == "tool_use"
            ]
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
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    for number, content in enumerate(contents):
        calls = _parts_with(content, "functionCall")
        if content.get("role") != "model" or not calls:
            continue
        following = contents[number + 1] if number + 1 < len(contents) else {}
        if _parts_with(following, "functionResponse") != calls:
            return (
                "Please ensure that the number of function response parts is equal "
                "to the number of function call parts of the function call turn."
            )
    return None


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return (
        [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    )


def _parts_with(content: dict[str, Any], key: str) -> int:
    return sum(1 for part in content.get("parts") or [] if key in part)


def _refusal(provider: Provider, message: str) -> _Reply:
    """A 400 answer carrying ``message`` in the provider's error shape."""
    reply = _error_reply(provider, 400, Step())
    assert reply.body is not None
    reply.body["error"]["message"] = message
    return reply


def _error_reply(provider: Provider, status: int, step: Step) -> _Reply:
    if provider == "openai":
        body = _openai_error_body(status)
    elif provider == "anthropic":
        body = _anthropic_error_body(status)
    else:
        body = _google_error_body(status)
    return _Reply(status, body=body, headers=dict(step.headers or {}), delay=step.delay)


class _Handler(BaseHTTPRequestHandler):
    """Routes a POST to its provider and writes the scripted reply."""

    owner: FakeLLM

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: test output is not the place for access logs."""

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        provider: Provider
        if path == "/v1/responses":
            provider = "openai"
        elif path == "/v1/messages":
            provider = "anthropic"
        elif _GOOGLE_PATH.match(path):
            provider = "google"
        else:
            self._write(_Reply(404, body={"error": {"message": "no such route"}}))
            return
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        headers = {
            key.lower(): (_REDACTED if key.lower() in _SECRET_HEADERS else value)
            for key, value in self.headers.items()
        }
        record = RecordedRequest(path=self.path, headers=headers, body=body)
        self._write(self.owner._answer(provider, record))

    def _write(self, reply: _Reply) -> None:
        if reply.delay:
            time.sleep(reply.delay)
        try:
            self.send_response(reply.status)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            if reply.frames is None:
                data = json.dumps(reply.body or {}).encode("utf-8")
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            else:
                # HTTP/1.0 without a length: closing the connection ends the body.
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for frame in reply.frames:
                    self.wfile.write(frame.encode("utf-8"))
                    self.wfile.flush()
                if reply.stall:
                    time.sleep(reply.stall)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (a timeout test); nothing left to tell it.
            pass


def in_process_transport(fake: FakeLLM, provider: Provider) -> Any:
    """An ``httpx2.MockTransport`` answering as ``fake`` would, with no socket, for
    benchmarks that measure the client side alone. Delays are not applied."""
    import httpx2

    def handle(request: Any) -> Any:
        body = json.loads(request.content or b"{}")
        record = RecordedRequest(
            path=str(request.url.raw_path, "ascii"), headers={}, body=body
        )
        reply = fake._answer(provider, record)
        if reply.frames is not None:
            return httpx2.Response(
                reply.status,
                headers={"content-type": "text/event-stream", **reply.headers},
                content="".join(reply.frames).encode(),
            )
        return httpx2.Response(reply.status, headers=reply.headers, json=reply.body)

    return httpx2.MockTransport(handle)


@contextmanager
def running_fake_llm() -> Iterator[FakeLLM]:
    """A started :class:`FakeLLM`, stopped on exit."""
    fake = FakeLLM()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()
