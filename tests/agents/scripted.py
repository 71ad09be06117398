"""A scripted model for turn tests: it plays given steps and records what it was
asked. It stands in for the language model only; everything else is real."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

from agents.providers.base import (
    ModelRequest,
    ProviderError,
    ProviderEvent,
    StepDone,
    TextDelta,
)
from tools.types import ToolCall


@dataclass
class Say:
    """One step: text, tool calls ``(name, arguments)``, or an error to raise."""

    text: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    error: ProviderError | None = None


@dataclass
class ScriptedProvider:
    steps: list[Say | Callable[[ModelRequest], Say]]
    name: str = "scripted"
    requests: list[ModelRequest] = field(default_factory=list)

    async def stream(
        self, request: ModelRequest
    ) -> AsyncGenerator[ProviderEvent, None]:
        self.requests.append(request)
        step = self.steps.pop(0)
        if callable(step):
            step = step(request)
        for start in range(0, len(step.text), 5):
            yield TextDelta(step.text[start : start + 5])
        if step.error is not None:
            raise step.error
        calls = tuple(
            ToolCall(
                id=f"call_{len(self.requests)}_{n}", name=name, arguments=arguments
            )
            for n, (name, arguments) in enumerate(step.calls)
        )
        yield StepDone(text=step.text, tool_calls=calls)


def reply_of(events: list[tuple[str, dict[str, Any]]]) -> str:
    """What a streaming client shows: the deltas after the last discard."""
    text = ""
    for name, data in events:
        if name == "discard":
            text = ""
        elif name == "delta":
            text += data["text"]
    return text
