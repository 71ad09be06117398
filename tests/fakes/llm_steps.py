"""What a test scripts the fake LLM APIs with, and what they answer: shared by the
server (``tests.fakes.llm_server``) and each API's fake."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Provider: TypeAlias = Literal["openai", "anthropic", "google"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "google")

Arguments: TypeAlias = dict[str, Any] | str
"""Tool call arguments: an object, or a raw string (possibly not valid JSON)."""

FAULTS = frozenset({"cut", "error", "max_tokens", "stall"})


@dataclass(frozen=True)
class Step:
    """One scripted answer of a provider.

    ``text`` and each tool call's arguments are streamed in pieces of ``chunk``
    characters, or cut at the offsets ``cuts`` when given. ``tool_calls`` are ``(call_id, name, arguments)``. ``fault`` is
    ``"cut"`` (the stream stops before its terminal event), ``"error"`` (the
    provider's mid-stream error event), ``"max_tokens"`` (the provider's
    truncation reason) or ``"stall"`` (a streamed answer sends what ``"cut"``
    sends, then holds the connection open for ``delay`` seconds). With ``"error"``,
    ``error_code`` makes OpenAI's stream end in ``response.failed`` with that code
    rather than in an ``error`` event of ``server_error``. ``status`` answers that HTTP status with the provider's
    error body instead. ``headers`` are added to the response, ``delay`` seconds
    pass before anything is written (after the partial stream for ``"stall"``).
    ``cached`` and ``cache_written``, when given, are the input tokens the
    answer's usage says were read from and written to the prompt cache; left
    ``None``, the fake's own cache works them out (``tests.fakes.llm_cache``).
    """

    text: str = ""
    tool_calls: Sequence[tuple[str, str, Arguments]] = field(default_factory=list)
    fault: str | None = None
    error_code: str | None = None
    status: int | None = None
    headers: dict[str, str] | None = None
    delay: float = 0.0
    chunk: int = 8
    cuts: tuple[int, ...] = ()
    cached: int | None = None
    cache_written: int | None = None

    def pieces(self, text: str) -> list[str]:
        """``text`` as this step streams it (no piece for empty text)."""
        if not self.cuts:
            return [text[i : i + self.chunk] for i in range(0, len(text), self.chunk)]
        bounds = [0, *sorted({c for c in self.cuts if 0 < c < len(text)}), len(text)]
        return [text[a:b] for a, b in itertools.pairwise(bounds) if a < b]

    def __post_init__(self) -> None:
        if self.fault is not None and self.fault not in FAULTS:
            raise ValueError(f"unknown fault {self.fault!r}")
        if self.chunk < 1:
            raise ValueError("chunk must be at least 1")


Script: TypeAlias = Callable[[dict[str, Any]], Step]


def searches_then(calls: int, answer: str) -> Script:
    """The benchmarks' model: ``calls`` catalog searches, one per step, then
    ``answer``; the results already sent back (OpenAI's or Anthropic's) count the
    searches made."""

    def step(body: dict[str, Any]) -> Step:
        text = str(body)
        done = text.count("function_call_output") + text.count("'tool_result'")
        if done < calls:
            return Step(
                tool_calls=[(f"call_{done}", "search_foods", {"query": "arroz"})]
            )
        return Step(text=answer)

    return step


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the fake received it: path (with query), headers, JSON body,
    and the body's bytes as sent."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes = b""


def arguments_text(arguments: Arguments) -> str:
    """Arguments as the JSON text a provider streams; raw strings stay as they are."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


def arguments_object(arguments: Arguments) -> Any:
    """Arguments as an object, for formats that carry objects (Anthropic's
    non-streamed ``input``, Gemini's ``args``). A string that is not JSON is sent
    as an empty object there: those formats cannot carry malformed JSON."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return {}


@dataclass
class Reply:
    """What the handler writes: a status, headers, and either one JSON body or a
    list of SSE frames (already formatted) for a streamed answer."""

    status: int
    body: dict[str, Any] | None = None
    frames: list[str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stall: float = 0.0
