"""Google adapter: the neutral request as a Gemini ``generateContent`` call, its
answer as neutral events.

An assistant step that came from Gemini is echoed as the model's exact
``Content`` (its ``thought_signature`` parts included, which Gemini 3 requires
back); another provider's step is rebuilt from text and ``function_call`` parts.
Automatic function calling is off: the SDK must never run tools itself. A step
counts only when its candidate finishes with ``STOP``.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any, cast

import httpx2
from google import genai
from google.genai import errors, types

from agents.providers.base import (
    AssistantStep,
    HistoryItem,
    ModelRequest,
    ProviderError,
    ProviderEvent,
    StepDone,
    TextDelta,
    ToolResults,
    Usage,
    UserText,
)
from agents.providers.wire import (
    SdkProvider,
    json_object,
    json_text,
    retry_after_seconds,
    status_failure,
)
from tools.types import ToolCall, ToolSpec

__all__ = ["GoogleProvider"]

_STATE_KEY = "google"

# Google's documented stand-in signature for a function call that Gemini did not
# produce (a step rebuilt from another provider's history). The SDK writes bytes
# as URL-safe base64, so these bytes go out as the literal sentinel text.
_REPLAYED_SIGNATURE = base64.urlsafe_b64decode("skip_thought_signature_validator")


class GoogleProvider(SdkProvider):
    """Gemini ``generateContent`` behind the neutral ``Provider`` interface.

    The ``genai.Client`` is kept for the adapter's lifetime (a dropped client
    closes its transport under a running request). The SDK does not retry by
    default; the turn loop owns retries. Its timeout is in milliseconds.
    """

    name = "google"

    sdk_errors = (errors.APIError, httpx2.HTTPError)
    _client: genai.Client

    def _client_new(
        self, *, api_key: str, base_url: str | None, timeout: float, http_client: Any
    ) -> genai.Client:
        return genai.Client(
            vertexai=False,
            api_key=api_key,
            http_options=types.HttpOptions(
                base_url=base_url,
                timeout=max(1, round(timeout * 1000)),
                httpx_async_client=http_client,
            ),
        )

    async def aclose(self) -> None:
        """Close the SDK client's async transport."""
        await self._client.aio.aclose()

    async def _events(
        self, request: ModelRequest
    ) -> AsyncGenerator[ProviderEvent, None]:
        model = request.model or self.model
        contents = _contents(request.history)
        config = types.GenerateContentConfig(
            system_instruction=request.instructions or None,
            tools=[_tool(request.tools)] if request.tools else None,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(
                disable=True
            ),
            max_output_tokens=request.max_output_tokens,
        )
        if self.streaming:
            chunks = cast(
                AsyncGenerator[types.GenerateContentResponse, None],
                await self._client.aio.models.generate_content_stream(
                    model=model, contents=cast(Any, contents), config=config
                ),
            )
        else:
            response = await self._client.aio.models.generate_content(
                model=model, contents=cast(Any, contents), config=config
            )
            chunks = _single(response)

        parts: list[types.Part] = []
        text: list[str] = []
        finish: types.FinishReason | None = None
        metadata: types.GenerateContentResponseUsageMetadata | None = None
        async with aclosing(chunks):
            async for chunk in chunks:
                # Each chunk's counts are the totals so far: the last one holds.
                metadata = chunk.usage_metadata or metadata
                candidate = chunk.candidates[0] if chunk.candidates else None
                if candidate is None:
                    continue
                received = candidate.content.parts if candidate.content else None
                for part in received or []:
                    parts.append(part)
                    if part.text and not part.thought:
                        text.append(part.text)
                        yield TextDelta(part.text)
                if candidate.finish_reason is not None:
                    finish = candidate.finish_reason
        if finish != types.FinishReason.STOP:
            reason = finish.value if finish is not None else "no finish reason"
            raise ProviderError("cut_off", f"google: the step ended with {reason}")
        yield _step_done("".join(text), parts, _usage(metadata))

    def _status_failure(self, exc: Exception, detail: str) -> ProviderError | None:
        if not isinstance(exc, errors.APIError):
            return None
        status = int(exc.code or 0)
        message = f"google: HTTP {status} ({exc.status}): {detail}"
        return status_failure(status, message, retry_after=_retry_after(exc))


def _usage(
    metadata: types.GenerateContentResponseUsageMetadata | None,
) -> Usage | None:
    """Gemini's counts: the prompt includes its cached part; thinking is billed
    as output beside the candidates."""
    if metadata is None:
        return None
    return Usage(
        input_tokens=(metadata.prompt_token_count or 0)
        + (metadata.tool_use_prompt_token_count or 0),
        cached_input_tokens=metadata.cached_content_token_count or 0,
        output_tokens=(metadata.candidates_token_count or 0)
        + (metadata.thoughts_token_count or 0),
    )


async def _single(
    response: types.GenerateContentResponse,
) -> AsyncGenerator[types.GenerateContentResponse, None]:
    """A whole response as a one-chunk stream, so both modes share one path."""
    yield response


def _tool(specs: tuple[ToolSpec, ...]) -> types.Tool:
    """One tool holding a declaration per spec, its schema as plain JSON Schema."""
    return types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name=spec.name,
                description=spec.description,
                parameters_json_schema=dict(spec.parameters),
            )
            for spec in specs
        ]
    )


def _contents(history: tuple[HistoryItem, ...]) -> list[types.Content]:
    """The conversation as Gemini contents, model steps in a row as one turn.

    A ``function_response`` needs the tool's name, found from the call in an
    earlier step. It carries the call id only when Gemini's call had one (older
    models send calls without ids; ours are then synthesised, see
    ``_step_done``).
    """
    contents: list[types.Content] = []
    names: dict[str, str] = {}
    native_ids: set[str] = set()
    for entry in history:
        if isinstance(entry, UserText):
            if entry.text:
                contents.append(
                    types.Content(role="user", parts=[types.Part(text=entry.text)])
                )
        elif isinstance(entry, AssistantStep):
            names.update((call.id, call.name) for call in entry.tool_calls)
            state = entry.provider_state.get(_STATE_KEY)
            if isinstance(state, Mapping) and "content" in state:
                content = types.Content.model_validate(_key_sorted(state["content"]))
            else:
                content = _rebuilt_step(entry)
            native_ids.update(
                part.function_call.id
                for part in content.parts or []
                if part.function_call is not None and part.function_call.id
            )
            if not content.parts:
                continue
            if contents and contents[-1].role == "model":
                # Gemini refuses a turn of calls that does not follow a user turn:
                # steps in a row (a reply, then an approved request's call) are
                # one model turn.
                contents[-1] = types.Content(
                    role="model", parts=[*(contents[-1].parts or []), *content.parts]
                )
            else:
                contents.append(content)
        elif isinstance(entry, ToolResults):
            contents.append(
                types.Content(
                    role="user",
                    parts=[
                        types.Part(
                            function_response=types.FunctionResponse(
                                id=r.call_id if r.call_id in native_ids else None,
                                name=names.get(r.call_id, r.call_id),
                                response={
                                    "error" if r.is_error else "output": _key_sorted(
                                        r.payload
                                    )
                                },
                            )
                        )
                        for r in entry.results
                    ],
                )
            )
    return contents


def _key_sorted(value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` with the keys of every object in sorted order: the SDK writes
    dicts in their order, and a step read back from the database (PostgreSQL's
    ``jsonb`` orders keys its own way) must repeat the prompt as first sent, for
    Gemini's implicit cache."""
    return cast(dict[str, Any], json.loads(json_text(dict(value))))


def _rebuilt_step(step: AssistantStep) -> types.Content:
    """A step without Gemini state: its text, then one ``function_call`` part per
    call with the stand-in signature (Gemini 3 rejects unsigned replayed calls)."""
    parts: list[types.Part] = []
    if step.text:
        parts.append(types.Part(text=step.text))
    for call in step.tool_calls:
        arguments = call.arguments
        args = _key_sorted(
            json_object(arguments) if isinstance(arguments, str) else arguments
        )
        parts.append(
            types.Part(
                function_call=types.FunctionCall(id=call.id, name=call.name, args=args),
                thought_signature=_REPLAYED_SIGNATURE,
            )
        )
    return types.Content(role="model", parts=parts)


def _step_done(text: str, parts: list[types.Part], usage: Usage | None) -> StepDone:
    """The finished step: its calls (a missing id is made up: the tool's name and
    a random part, unique in the conversation, since another provider may be
    sent this step with its results and pairs them by id) and the model's content
    as a JSON-able dict that validates back into a ``Content``."""
    calls: list[ToolCall] = []
    for part in parts:
        call = part.function_call
        if call is None:
            continue
        name = call.name or ""
        calls.append(
            ToolCall(
                id=call.id or f"{name}-{secrets.token_hex(6)}",
                name=name,
                arguments=dict(call.args or {}),
            )
        )
    content = types.Content(role="model", parts=_folded(parts))
    state = content.model_dump(mode="json", exclude_none=True)
    return StepDone(text, tuple(calls), {_STATE_KEY: {"content": state}}, usage)


def _folded(parts: list[types.Part]) -> list[types.Part]:
    """The streamed parts, compacted for the history: runs of plain text parts
    (no signature, same ``thought`` flag) become one part, empty ones go. A part
    with a signature or a call is kept exactly as it came."""
    kept: list[types.Part] = []
    for part in parts:
        if not _is_plain_text(part):
            kept.append(part)
        elif not part.text:
            continue
        elif kept and _is_plain_text(kept[-1]) and kept[-1].thought == part.thought:
            kept[-1] = types.Part(
                text=(kept[-1].text or "") + part.text, thought=part.thought
            )
        else:
            kept.append(part)
    return kept


def _is_plain_text(part: types.Part) -> bool:
    return part.model_dump(exclude_none=True).keys() <= {"text", "thought"}


def _retry_after(exc: errors.APIError) -> float | None:
    """Seconds to wait: the ``retry-after`` header, else the ``retryDelay`` of a
    ``RetryInfo`` detail in the error body (how Gemini usually says it)."""
    headers = getattr(exc.response, "headers", None) or {}
    from_header = retry_after_seconds(headers)
    if from_header is not None:
        return from_header
    body = exc.details if isinstance(exc.details, Mapping) else {}
    error = body.get("error", body)
    for detail in error.get("details", []) if isinstance(error, Mapping) else []:
        delay = detail.get("retryDelay") if isinstance(detail, Mapping) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return max(0.0, float(delay[:-1]))
            except ValueError:
                return None
    return None
