"""Anthropic adapter: the neutral request as a Messages API call, its answer as
neutral events.

An assistant step that came from Anthropic is echoed as its exact content blocks
(thinking blocks and their signatures included); another provider's step is
rebuilt from text and ``tool_use`` blocks. Consecutive items of the same role are
merged because the API wants user and assistant messages to alternate. A step
counts only after ``message_stop`` with a stop reason that means "finished".
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any, cast

import anthropic
import httpx2
from anthropic.types import Message

from agents.providers.base import (
    AssistantStep,
    ErrorKind,
    HistoryItem,
    ModelRequest,
    ProviderError,
    ProviderEvent,
    StepDone,
    TextDelta,
    Usage,
    UserText,
)
from agents.providers.wire import (
    SdkProvider,
    encoded_once,
    json_dumps,
    json_object,
    json_text,
    retry_after_seconds,
    status_failure,
)
from tools.types import ToolCall, ToolSpec

__all__ = ["AnthropicProvider"]

_STATE_KEY = "anthropic"
_FINISHED = frozenset({"end_turn", "tool_use", "stop_sequence"})

# 429s that waiting does not cure: the organisation's spending is capped.
_SPEND_LIMITS = (
    anthropic.EnforcedSpendLimitReachedError,
    anthropic.ContractSpendLimitReachedError,
)

# The kind of an error event that arrives inside a stream (HTTP status 200).
_STREAM_ERROR_KINDS: dict[str, ErrorKind] = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limited",
    "api_error": "unavailable",
    "timeout_error": "unavailable",
}


class AnthropicProvider(SdkProvider):
    """The Anthropic Messages API behind the neutral ``Provider`` interface.

    Each step's ``max_tokens`` is the request's ``max_output_tokens`` (the agent's
    setting). With ``base_url=None`` the SDK reads ``ANTHROPIC_BASE_URL``.
    """

    name = "anthropic"

    sdk_client = anthropic.AsyncAnthropic
    sdk_errors = (anthropic.APIError, httpx2.HTTPError)
    transport_errors = (anthropic.APIConnectionError, httpx2.HTTPError)
    _client: anthropic.AsyncAnthropic

    def _body(self, request: ModelRequest) -> bytes:
        """The Messages request: tools, system and messages, the order Anthropic
        caches a prompt in. With prompt caching, a breakpoint ends the tools, one
        the system text and one the latest message: each step reads what the
        last one wrote (a change of instructions still reads the tools)."""
        tools = self._tools_json(request, _tool_json)
        messages = _messages(request.history, breakpoint=self.prompt_caching)
        fields: dict[str, Any] = {"max_tokens": request.max_output_tokens}
        if request.instructions:
            fields["system"] = request.instructions
        if self.prompt_caching:
            if tools:
                tools[-1] = _with_breakpoint(tools[-1])
            if request.instructions:
                fields["system"] = [
                    {
                        "type": "text",
                        "text": request.instructions,
                        "cache_control": _EPHEMERAL,
                    }
                ]
        return self._request_body(
            request, fields=fields, tools=tools, history=("messages", messages)
        )

    async def _answered(self, body: bytes) -> StepDone:
        """A step asked for without streaming."""
        message: Message = await self._post(body, stream=False)
        if message.stop_reason not in _FINISHED:
            raise ProviderError("cut_off", _unfinished(message.stop_reason))
        content = [_dump(block) for block in message.content]
        calls = tuple(
            ToolCall(id=block.id, name=block.name, arguments=dict(block.input))
            for block in message.content
            if block.type == "tool_use"
        )
        return StepDone(
            "".join(b["text"] for b in content if b.get("type") == "text"),
            calls,
            {_STATE_KEY: {"content": content}},
            _usage(message.usage.model_dump(mode="json")),
        )

    async def _streamed(self, body: bytes) -> AsyncGenerator[ProviderEvent, None]:
        """A streamed step: its text as it arrives, then the step once
        ``message_stop`` arrives with a stop reason that means "finished"."""
        # The SDK does the request, authentication, SSE framing and error events;
        # the events it hands over are the server's JSON (an SDK model per event,
        # and re-typing the whole history per request, cost more than the rest of
        # a tool call's work).
        stream: anthropic.AsyncStream[dict[str, Any]] = await self._post(
            body, stream=True
        )
        message = _StreamedMessage()
        async with stream:
            async for event in stream:
                text = message.take(event)
                if text:
                    yield TextDelta(text)
        yield message.step()

    async def _post(self, body: bytes, *, stream: bool) -> Any:
        """``messages.create`` through the SDK's documented ``post``, with a body
        that is already the wire JSON (each history item encoded once) and, when
        streaming, the events left as parsed JSON (``object``). Measured
        (``tests/bench/bench_sdk_requests.py``, 2026-12-03): ``create``'s copy of
        the params and the body's encoding grow from 0.06 ms a request with no
        history to 0.37 ms with 40 calls, a fifth of what a call of ours costs:
        a call late in a long turn would cost more than an early one."""
        return await self._client.post(
            "/v1/messages",
            content=body,
            cast_to=Message,
            stream=stream,
            stream_cls=anthropic.AsyncStream[object],
        )

    def _status_failure(self, exc: Exception, detail: str) -> ProviderError | None:
        if not isinstance(exc, anthropic.APIStatusError):
            return None
        status = exc.status_code
        message = f"anthropic: HTTP {status} ({exc.type}): {detail}"
        if status == 200:  # an ``event: error`` inside the stream
            kind = _STREAM_ERROR_KINDS.get(str(exc.type), "cut_off")
            return ProviderError(kind, message)
        if isinstance(exc, _SPEND_LIMITS):
            return ProviderError("refused", message)
        return status_failure(
            status,
            message,
            retry_after=retry_after_seconds(exc.response.headers),
            overloaded=exc.type == "overloaded_error",
        )


class _StreamedMessage:
    """A message put together from its stream's events (as parsed JSON)."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.buffers: dict[int, list[str]] = {}
        self.text: list[str] = []
        self.stop_reason: str | None = None
        self.stopped = False
        self.usage: dict[str, Any] = {}

    def take(self, event: dict[str, Any]) -> str:
        """Take in one event; return the text it adds to the reply (maybe "")."""
        kind = event.get("type")
        if kind == "message_start":
            self.usage.update(event["message"].get("usage") or {})
        elif kind == "content_block_start":
            self.blocks[event["index"]] = _without_nulls(event["content_block"])
        elif kind == "content_block_delta":
            return self._delta(event["index"], event["delta"])
        elif kind == "message_delta":
            self.stop_reason = event["delta"].get("stop_reason")
            # Cumulative counts: they replace the start's.
            self.usage.update(
                (key, value)
                for key, value in (event.get("usage") or {}).items()
                if value is not None
            )
        elif kind == "message_stop":
            self.stopped = True
        return ""

    def _delta(self, index: int, delta: dict[str, Any]) -> str:
        block = self.blocks.setdefault(index, {})
        kind = delta["type"]
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            self.text.append(delta["text"])
            return str(delta["text"])
        if kind == "input_json_delta":
            self.buffers.setdefault(index, []).append(delta["partial_json"])
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
        elif kind == "signature_delta":
            block["signature"] = delta["signature"]
        return ""

    def step(self) -> StepDone:
        """The finished step; a message that did not finish raises ``cut_off``."""
        if not self.stopped or self.stop_reason not in _FINISHED:
            raise ProviderError(
                "cut_off", _unfinished(self.stop_reason, stopped=self.stopped)
            )
        content, calls = _finish_blocks(self.blocks, self.buffers)
        return StepDone(
            "".join(self.text),
            calls,
            {_STATE_KEY: {"content": content}},
            _usage(self.usage),
        )


_EPHEMERAL = {"type": "ephemeral"}
_BREAKPOINT = b',"cache_control":{"type":"ephemeral"}}'
#: Blocks that may end a cached prefix (thinking blocks may not carry one).
_MARKABLE = frozenset({"text", "tool_result", "tool_use", "image", "document"})


def _with_breakpoint(block: bytes) -> bytes:
    """A block's JSON object with a cache breakpoint added at its end."""
    return block[:-1] + _BREAKPOINT


def _tool_json(spec: ToolSpec) -> bytes:
    return json_dumps(
        {
            "name": spec.name,
            "description": spec.description,
            "input_schema": dict(spec.parameters),
        }
    )


def _messages(history: tuple[HistoryItem, ...], *, breakpoint: bool) -> list[bytes]:
    """The conversation as alternating user and assistant messages (JSON): the
    blocks of consecutive items of one role merged into one message, and in a
    user message ``tool_result`` blocks first, as the API expects. With
    ``breakpoint``, the last block carries a cache breakpoint, so that the next
    step reads the whole history so far from the cache."""
    merged: list[tuple[str, list[tuple[str, bytes]]]] = []
    for entry in history:
        encoded = encoded_once(entry, _STATE_KEY, _role_blocks)
        if encoded is None:
            continue
        role, blocks = encoded
        if merged and merged[-1][0] == role:
            merged[-1][1].extend(blocks)
        else:
            merged.append((role, list(blocks)))
    for role, content in merged:
        if role == "user":
            content.sort(key=lambda block: block[0] != "tool_result")
    if breakpoint and merged and merged[-1][1] and merged[-1][1][-1][0] in _MARKABLE:
        kind, last = merged[-1][1][-1]
        merged[-1][1][-1] = (kind, _with_breakpoint(last))
    return [
        b'{"content":[%s],"role":"%s"}'
        % (b",".join(json for _, json in content), role.encode())
        for role, content in merged
    ]


def _role_blocks(
    entry: HistoryItem,
) -> tuple[str, tuple[tuple[str, bytes], ...]] | None:
    """One history item's role and content blocks, each block as its type and
    JSON; ``None`` for an item that sends nothing."""
    blocks: list[dict[str, Any]]
    if isinstance(entry, UserText):
        if not entry.text:
            return None
        role, blocks = "user", [{"type": "text", "text": entry.text}]
    elif isinstance(entry, AssistantStep):
        state = entry.provider_state.get(_STATE_KEY)
        role = "assistant"
        if isinstance(state, Mapping) and "content" in state:
            blocks = [dict(block) for block in state["content"]]
        else:
            blocks = _rebuilt_step(entry)
        # The API refuses a text block of whitespace (a model may write one before
        # its calls), and an assistant message with no content.
        blocks = [block for block in blocks if not _blank_text(block)]
        if not blocks:
            return None
    else:
        role = "user"
        blocks = [
            {
                "type": "tool_result",
                "tool_use_id": result.call_id,
                "content": json_text(dict(result.payload)),
                "is_error": result.is_error,
            }
            for result in entry.results
        ]
    return role, tuple((str(block.get("type")), json_dumps(block)) for block in blocks)


def _blank_text(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "text" and not str(block.get("text", "")).strip()


def _rebuilt_step(step: AssistantStep) -> list[dict[str, Any]]:
    """A step without Anthropic state: a text block and one ``tool_use`` block per
    call, whose ``input`` must be an object (unparseable arguments become {})."""
    blocks: list[dict[str, Any]] = []
    if step.text:
        blocks.append({"type": "text", "text": step.text})
    for call in step.tool_calls:
        arguments = call.arguments
        tool_input = (
            json_object(arguments) if isinstance(arguments, str) else dict(arguments)
        )
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input}
        )
    return blocks


def _finish_blocks(
    blocks: dict[int, dict[str, Any]], buffers: dict[int, list[str]]
) -> tuple[list[dict[str, Any]], tuple[ToolCall, ...]]:
    """The streamed blocks as request params, and the step's tool calls.

    A tool call's arguments are its streamed JSON text unparsed, so that a
    malformed buffer reaches the validator as it is; when no text was streamed
    the block's whole ``input`` object is used.
    """
    content: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    for index in sorted(blocks):
        block = blocks[index]
        if block.get("type") == "tool_use":
            raw = "".join(buffers.get(index, []))
            whole = block.get("input")
            arguments: str | dict[str, Any] = (
                raw if raw else dict(whole) if isinstance(whole, Mapping) else {}
            )
            block["input"] = json_object(raw) if raw else arguments
            calls.append(
                ToolCall(
                    id=str(block.get("id", "")),
                    name=str(block.get("name", "")),
                    arguments=arguments,
                )
            )
        content.append(block)
    return content, tuple(calls)


def _usage(usage: Mapping[str, Any]) -> Usage | None:
    """A message's usage: Anthropic's ``input_tokens`` leaves out what was read
    from or written to the cache, which the neutral figure includes."""
    if not usage:
        return None
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    return Usage(
        input_tokens=int(usage.get("input_tokens") or 0) + read + written,
        cached_input_tokens=read,
        cache_write_tokens=written,
        output_tokens=int(usage.get("output_tokens") or 0),
    )


def _without_nulls(block: Mapping[str, Any]) -> dict[str, Any]:
    """A streamed content block as a valid request param (no null fields)."""
    return {key: value for key, value in block.items() if value is not None}


def _dump(model: Any) -> dict[str, Any]:
    """An SDK content block as a JSON-able dict that is a valid request param."""
    return cast(dict[str, Any], model.model_dump(mode="json", exclude_none=True))


def _unfinished(stop_reason: str | None, *, stopped: bool = True) -> str:
    if not stopped:
        return f"anthropic: the stream ended without message_stop (stop_reason {stop_reason})"
    return f"anthropic: the step stopped with stop_reason {stop_reason}"
