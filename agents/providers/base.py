"""The neutral interface every provider adapter implements.

A turn sends a ``ModelRequest`` (instructions, the conversation's history in neutral
form, the tools offered this turn) and reads a stream of events: ``TextDelta`` pieces
of text as they arrive, then exactly one ``StepDone`` with the step's whole text and
its complete tool calls. An adapter raises ``ProviderError`` when the step cannot be
trusted (rate limited, overloaded, unreachable, refused, or cut off): a step that did
not finish never reaches ``StepDone``, so its tool calls are never executed.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tools.types import ToolCall, ToolResult, ToolSpec


@dataclass(frozen=True)
class UserText:
    """What the member wrote."""

    text: str
    # Each adapter's request JSON for the item, by provider name, filled on first
    # use (``wire.encoded_once``): items never change and a turn sends its whole
    # history on every step, so each item is encoded once. Not part of its value.
    wire: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class AssistantStep:
    """One step of the model: its text and the tool calls it proposed.

    ``provider_state`` holds what a provider needs echoed back verbatim in later
    requests (OpenAI output items, Anthropic content blocks, Gemini content with
    thought signatures), keyed by provider name; another provider ignores it.
    """

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    provider_state: Mapping[str, Any] = field(default_factory=dict)
    wire: dict[str, Any] = field(  # as UserText.wire
        default_factory=dict, compare=False, repr=False
    )


@dataclass(frozen=True)
class ToolResults:
    """The results of the previous step's tool calls, each under its call id."""

    results: tuple[ToolResult, ...]
    wire: dict[str, Any] = field(  # as UserText.wire
        default_factory=dict, compare=False, repr=False
    )


HistoryItem = UserText | AssistantStep | ToolResults


@dataclass(frozen=True)
class ModelRequest:
    instructions: str
    history: tuple[HistoryItem, ...]
    tools: tuple[ToolSpec, ...]
    model: str = ""
    #: What the model may write in the step, reasoning included (in a turn, the
    #: agent's ``max_output_tokens``).
    max_output_tokens: int = 8192
    #: Which requests share a prompt prefix (an agent's, with members or with
    #: visitors): OpenAI routes requests of one key to the same prompt cache.
    cache_key: str = ""


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class Usage:
    """The tokens a step was billed for, as its provider reported them.

    ``input_tokens`` is all the input, cached or not; ``cached_input_tokens`` the
    part read from the provider's prompt cache and ``cache_write_tokens`` the part
    written to it (Anthropic bills writes apart); ``output_tokens`` all the output,
    reasoning included.
    """

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class StepDone:
    """The step finished normally: ``text`` is all its text, ``tool_calls`` every call
    it proposed (arguments as the provider sent them: a JSON string or an object).
    ``usage`` is what the provider said the step cost, ``None`` when it said
    nothing."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    provider_state: Mapping[str, Any] = field(default_factory=dict)
    usage: Usage | None = None


ProviderEvent = TextDelta | StepDone

ErrorKind = Literal["rate_limited", "overloaded", "unavailable", "refused", "cut_off"]


class ProviderError(Exception):
    """The model could not give a trustworthy step.

    ``kind`` says what happened: ``rate_limited`` and ``overloaded`` may be retried
    after ``retry_after`` seconds (when the provider said), ``unavailable`` means it
    could not be reached or did not answer in time, ``refused`` means it rejected
    the request (bad request, bad key), ``cut_off`` means the step ended before it
    was complete (stream cut, token limit, incomplete response).
    """

    def __init__(
        self, kind: ErrorKind, message: str, *, retry_after: float | None = None
    ):
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


class Provider(Protocol):
    name: str

    def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent, None]:
        """Stream one step's events; raise ``ProviderError`` instead of ``StepDone``
        when the step cannot be trusted. The caller closes the generator once it
        has the ``StepDone``."""
        ...
