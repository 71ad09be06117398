"""OpenAI adapter: the neutral request as a Responses API call, its answer as
neutral events.

The conversation is sent whole each time (stateless): an assistant step that came
from OpenAI is echoed as the exact output items it produced (reasoning items
included), any other step is rebuilt from its text and tool calls. A step counts
only when ``response.completed`` arrives. A stream that ends in a rate limit or a
server fault is that failure (the turn asks again, as after an HTTP 429 or 500);
anything else unfinished is ``cut_off``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any, cast

import httpx2
import openai
from openai.types.responses import Response

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
    MAX_MESSAGE,
    SdkProvider,
    encoded_once,
    json_dumps,
    json_text,
    retry_after_seconds,
    status_failure,
)
from tools.types import ToolCall, ToolSpec

__all__ = ["OpenAIProvider"]

_STATE_KEY = "openai"

#: A stream that ends in one of these errors is a rate limit or a fault of the
#: server, retried as its HTTP status would be; nothing of the step ran.
_STREAM_FAILURES: dict[str, ErrorKind] = {
    "rate_limit_exceeded": "rate_limited",
    "server_error": "unavailable",
}


class OpenAIProvider(SdkProvider):
    """The OpenAI Responses API behind the neutral ``Provider`` interface. With
    ``base_url=None`` the SDK falls back to ``OPENAI_BASE_URL``, then its default.
    """

    name = "openai"

    sdk_client = openai.AsyncOpenAI
    sdk_errors = (openai.APIError, httpx2.HTTPError)
    transport_errors = (openai.APIConnectionError, httpx2.HTTPError)
    # A bare APIError: an error payload inside the stream ended the step.
    unusable = "error mid-stream"
    _client: openai.AsyncOpenAI

    def _body(self, request: ModelRequest) -> bytes:
        """The Responses request: instructions and tools first, then the input;
        with ``prompt_cache_key`` (the request's cache key), requests sharing a
        prefix reach the same cache."""
        fields: dict[str, Any] = {"max_output_tokens": request.max_output_tokens}
        if request.instructions:
            fields["instructions"] = request.instructions
        if self.prompt_caching and request.cache_key:
            fields["prompt_cache_key"] = request.cache_key
        return self._request_body(
            request,
            fields=fields,
            tools=self._tools_json(request, _tool_json),
            history=(
                "input",
                [encoded_once(e, _STATE_KEY, _input_json) for e in request.history],
            ),
        )

    async def _answered(self, body: bytes) -> StepDone:
        """A step asked for without streaming."""
        response: Response = await self._create(body, stream=False)
        if response.status != "completed":
            raise ProviderError(
                "cut_off", _unfinished(response.model_dump(mode="json"))
            )
        output = [_dump(item) for item in response.output]
        usage = response.usage.model_dump(mode="json") if response.usage else None
        return _step_done(response.output_text, output, usage)

    async def _streamed(self, body: bytes) -> AsyncGenerator[ProviderEvent, None]:
        """A streamed step: its text as it arrives, then the step once
        ``response.completed`` arrives; a failed or unfinished stream raises."""
        # Events arrive as the JSON the server sent: building an SDK model of
        # every event (one per few characters of text) costs more than the rest
        # of the turn's own work.
        stream: openai.AsyncStream[dict[str, Any]] = await self._create(
            body, stream=True
        )
        text: list[str] = []
        items: dict[int, dict[str, Any]] = {}
        done: StepDone | None = None
        async with stream:
            async for event in stream:
                kind = event.get("type")
                if kind == "response.output_text.delta":
                    text.append(event["delta"])
                    yield TextDelta(event["delta"])
                elif kind in (
                    "response.output_item.added",
                    "response.output_item.done",
                ):
                    items[event["output_index"]] = dict(event["item"])
                elif kind == "response.function_call_arguments.delta":
                    item = items.setdefault(event["output_index"], {})
                    item["arguments"] = item.get("arguments", "") + event["delta"]
                elif kind == "response.function_call_arguments.done":
                    items.setdefault(event["output_index"], {})["arguments"] = event[
                        "arguments"
                    ]
                elif kind == "response.completed":
                    # The final output is authoritative; the reassembled items
                    # stand in only when a server leaves it empty.
                    output = list(event["response"].get("output") or []) or [
                        items[index] for index in sorted(items)
                    ]
                    done = _step_done(
                        "".join(text), output, event["response"].get("usage")
                    )
                else:
                    _raise_if_failed(event)
        # Read to its end, the stream closes itself and the SDK's generators with
        # it; stopping early would leave each to the garbage collector, which
        # closes them later in tasks of their own.
        if done is None:
            raise ProviderError(
                "cut_off", "openai: the stream ended before it completed"
            )
        yield done

    async def _create(self, body: bytes, *, stream: bool) -> Any:
        """``responses.create`` without the SDK re-typing the request.

        ``responses.create`` walks every input item through its TypedDict unions
        and encodes the whole history again on each request, so a step cost more
        the longer the turn. The body is already the wire JSON, each history item
        encoded once (``encoded_once``), and goes through the SDK's documented
        ``post`` for the same endpoint, with the same authentication, streaming
        and response types. Measured (``tests/bench/bench_sdk_requests.py``,
        2026-12-03): the typed params alone cost 2.4 ms a request with no history
        and 39 ms with 40 calls, where a call of ours costs 1.5-1.8 ms in all.
        """
        return await self._client.post(
            "/responses",
            content=body,
            cast_to=Response,
            stream=stream,
            # ``object``: the SDK hands each event over as parsed JSON.
            stream_cls=openai.AsyncStream[object],
            options={"security": {"bearer_auth": True}},
        )

    def _status_failure(self, exc: Exception, detail: str) -> ProviderError | None:
        if not isinstance(exc, openai.APIStatusError):
            return None
        status = exc.status_code
        return status_failure(
            status,
            f"openai: HTTP {status}: {detail}",
            retry_after=retry_after_seconds(exc.response.headers),
            overloaded="overloaded" in f"{exc.type} {exc.code}",
        )


def _tool_json(spec: ToolSpec) -> bytes:
    """A flat function tool. ``strict`` is off: our schemas have optional
    properties, and arguments are validated by the tool layer anyway."""
    return json_dumps(
        {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.parameters),
            "strict": False,
        }
    )


def _input_json(entry: HistoryItem) -> bytes:
    """One history item as Responses input items: JSON, comma-separated."""
    return b",".join(json_dumps(item) for item in _input_items(entry))


def _input_items(entry: HistoryItem) -> list[dict[str, Any]]:
    if isinstance(entry, UserText):
        return [{"role": "user", "content": entry.text}]
    if isinstance(entry, AssistantStep):
        state = entry.provider_state.get(_STATE_KEY)
        if isinstance(state, Mapping) and "output" in state:
            return [dict(item) for item in state["output"]]
        return _rebuilt_step(entry)
    return [
        {
            "type": "function_call_output",
            "call_id": result.call_id,
            "output": json_text(dict(result.payload)),
        }
        for result in entry.results
    ]


def _rebuilt_step(step: AssistantStep) -> list[dict[str, Any]]:
    """A step without OpenAI state (another provider's): its text as an
    assistant message, then one ``function_call`` item per call."""
    items: list[dict[str, Any]] = []
    if step.text:
        items.append({"role": "assistant", "content": step.text})
    for call in step.tool_calls:
        arguments = call.arguments
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": arguments
                if isinstance(arguments, str)
                else json_text(dict(arguments)),
            }
        )
    return items


def _step_done(
    text: str, output: list[dict[str, Any]], usage: Mapping[str, Any] | None
) -> StepDone:
    """The finished step: its function calls with their raw argument strings
    (the tool layer reports malformed JSON), the output items to echo, and its
    usage (``input_tokens`` counts the cached ones too)."""
    calls = tuple(
        ToolCall(
            id=str(item.get("call_id", "")),
            name=str(item.get("name", "")),
            arguments=str(item.get("arguments", "")),
        )
        for item in output
        if item.get("type") == "function_call"
    )
    return StepDone(
        text=text,
        tool_calls=calls,
        provider_state={_STATE_KEY: {"output": output}},
        usage=None
        if not usage
        else Usage(
            input_tokens=int(usage.get("input_tokens") or 0),
            cached_input_tokens=int(
                (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0
            ),
            output_tokens=int(usage.get("output_tokens") or 0),
        ),
    )


def _raise_if_failed(event: dict[str, Any]) -> None:
    """A stream event that ends the step unfinished raises its ``ProviderError``:
    a rate limit or server fault as that failure, anything else as ``cut_off``."""
    kind = event.get("type")
    if kind == "response.failed":
        error = event["response"].get("error") or {}
        raise ProviderError(
            _STREAM_FAILURES.get(str(error.get("code")), "cut_off"),
            _unfinished(event["response"]),
        )
    if kind == "response.incomplete":
        raise ProviderError("cut_off", _unfinished(event["response"]))
    if kind == "error":
        raise ProviderError(
            _STREAM_FAILURES.get(str(event.get("code")), "cut_off"),
            f"openai: error event mid-stream ({event.get('code')}): "
            f"{str(event.get('message'))[:MAX_MESSAGE]}",
        )


def _dump(item: Any) -> dict[str, Any]:
    """An SDK output item as a JSON-able dict that is valid request input."""
    return cast(dict[str, Any], item.model_dump(mode="json", exclude_none=True))


def _unfinished(response: dict[str, Any]) -> str:
    """Why a response did not complete, in a few words."""
    reason = ""
    details = response.get("incomplete_details")
    error = response.get("error")
    if details:
        reason = str(details.get("reason"))
    elif error:
        reason = f"{error.get('code')}: {str(error.get('message'))[:MAX_MESSAGE]}"
    return f"openai: response {response.get('status')}: {reason}".rstrip(": ")
