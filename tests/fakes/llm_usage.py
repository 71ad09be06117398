"""The tokens the fake LLM APIs say a step used.

Tokens are counted approximately, as characters / 4 of the request body and of
the step's output (the real tokenizers are not available offline); what a step
read from or wrote to a prompt cache is what the test scripted on the ``Step``,
else what the fake's cache worked out (``tests.fakes.llm_cache``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.fakes.llm_steps import Step, arguments_text


@dataclass(frozen=True)
class Counts:
    input: int  # all input, cached or not
    cached: int
    written: int
    output: int


def counted(
    body: dict[str, Any], step: Step, cache: tuple[int, int] = (0, 0)
) -> Counts:
    """A step's usage for ``body``: ``cache`` is what the fake's cache read and
    wrote, unless ``step`` scripts its own figures."""
    output = step.text + "".join(
        name + arguments_text(arguments) for _, name, arguments in step.tool_calls
    )
    whole = len(json.dumps(body, ensure_ascii=False)) // 4
    cached = cache[0] if step.cached is None else step.cached
    written = cache[1] if step.cache_written is None else step.cache_written
    return Counts(
        input=max(whole, cached + written),
        cached=cached,
        written=written,
        output=len(output) // 4 + 1,
    )
