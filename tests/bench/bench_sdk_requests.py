"""Benchmark: what the SDKs' typed calls would add to each model request, by the
length of the turn's history.

``responses.create`` (openai) and ``messages.create`` (anthropic) prepare their
params before sending them: openai walks every input item through its typed
unions (``maybe_transform``), anthropic copies the tree (``prepare_request_data``);
then the whole body is encoded again. The adapters post the wire JSON instead,
each history item encoded once (``agents/providers/wire.py``). This prints the
median time of the SDKs' own preparation (their internal functions, called as
``create`` calls them) and of the JSON encoding of the whole body, for a history
of 0, 10, 40 and 100 tool calls: the cost a step would pay on top of ours.

Run: ``.venv/bin/python tests/bench/bench_sdk_requests.py [--repeats 30]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from anthropic._utils._prepare import prepare_request_data
from openai._utils._transform import maybe_transform
from openai.types.responses import response_create_params

RESULT = {
    "status": "ok",
    "results": [
        {
            "id": "food_1",
            "name": "Arroz blanco (cocido)",
            "per_100g": {"kcal": 130, "carbohydrates_g": 28, "protein_g": 2.7},
        }
    ],
}
SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
}


def _openai_body(calls: int) -> dict[str, Any]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "busca arroz"}]
    for n in range(calls):
        items.append(
            {
                "type": "function_call",
                "call_id": f"call_{n}",
                "name": "search_foods",
                "arguments": json.dumps({"query": "arroz"}),
            }
        )
        items.append(
            {
                "type": "function_call_output",
                "call_id": f"call_{n}",
                "output": json.dumps(RESULT),
            }
        )
    tools = [
        {
            "type": "function",
            "name": f"tool_{n}",
            "description": "A tool of the gym. " * 10,
            "parameters": SCHEMA,
            "strict": False,
        }
        for n in range(9)
    ]
    return {"model": "gpt-5-mini", "input": items, "tools": tools, "stream": True}


def _anthropic_body(calls: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "busca arroz"}]
    for n in range(calls):
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "search_foods"}
        messages.append(
            {"role": "assistant", "content": [{**use, "input": {"query": "arroz"}}]}
        )
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}"}
        messages.append(
            {"role": "user", "content": [{**result, "content": json.dumps(RESULT)}]}
        )
    tools = [
        {
            "name": f"tool_{n}",
            "description": "A tool of the gym. " * 10,
            "input_schema": SCHEMA,
        }
        for n in range(9)
    ]
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": messages,
        "tools": tools,
        "stream": True,
    }


def _median_ms(work: Callable[[Any], object], value: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work(value)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    repeats = parser.parse_args().repeats
    streaming = response_create_params.ResponseCreateParamsStreaming
    for calls in (0, 10, 40, 100):
        openai_body, anthropic_body = _openai_body(calls), _anthropic_body(calls)
        typed = _median_ms(
            lambda body: maybe_transform(body, streaming), openai_body, repeats
        )
        copied = _median_ms(
            lambda body: prepare_request_data(body, location="body"),
            anthropic_body,
            repeats,
        )
        encoded = _median_ms(
            lambda body: json.dumps(body).encode(), openai_body, repeats
        )
        print(
            f"history of {calls:3} calls: openai's typed params {typed:6.2f} ms, "
            f"anthropic's copy {copied:5.2f} ms, encoding the whole body "
            f"{encoded:5.2f} ms (a request, per step)"
        )


if __name__ == "__main__":
    main()
