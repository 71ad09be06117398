"""The prompt caches of the fake LLM APIs: what a request reads from a cache and
writes to it, worked out as each real API does it.

Tokens are counted approximately, as characters / 4 (``llm_usage``), of the
prompt's pieces in the order the API reads them, each piece its JSON as received
(Anthropic's ``cache_control`` left out: a breakpoint marks where a prefix ends,
it is not part of it). A cache is per model, and per fake server (its life).

- **OpenAI** (``OpenAICache``): a request is compared with the earlier requests of
  its ``prompt_cache_key``; without a key, with those whose first 256 tokens are
  the same (the real API routes on a hash of the prompt's start). Cached is the
  longest common prefix with one of them, in steps of 128 tokens, and nothing
  under 1,024 tokens. Prompt order: instructions, tools, input.
- **Anthropic** (``AnthropicCache``): only breakpoints cache. For each
  breakpoint, the prefix up to it, or up to one of the 20 blocks before it, that
  an earlier request wrote is read; the prefix up to the last breakpoint, past
  what was read, is written. A prefix under 1,024 tokens (Sonnet's minimum) is
  neither read nor written. Prompt order: tools, system, messages.
- **Gemini** (``GeminiCache``, implicit caching): the longest common prefix with
  any earlier request to the model is read, when it is at least 1,024 tokens
  (2.5 Flash's minimum), to the token. Prompt order: system instruction, tools,
  contents.

``enabled=False`` is an API that caches nothing (the benchmarks' baseline for
the implicit caches, which a client cannot turn off).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict, deque
from typing import Any

MIN_TOKENS = 1024
OPENAI_STEP = 128
#: Characters the OpenAI fake routes on when a request has no key (256 tokens).
OPENAI_ROUTE_CHARS = 256 * 4
ANTHROPIC_LOOKBACK = 20
#: Earlier prompts each OpenAI key or Gemini model is compared with.
KEPT = 64


def tokens(characters: int) -> int:
    return characters // 4


def _piece(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # a[:low] == b[:low], and they differ before ``high`` + 1
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class _PrefixCache:
    """Earlier prompts, by key, compared whole with a new one."""

    def __init__(self) -> None:
        self.enabled = True
        self._prompts: dict[tuple[str, str], deque[str]] = defaultdict(
            lambda: deque(maxlen=KEPT)
        )

    def _longest_common(self, key: tuple[str, str], prompt: str) -> int:
        """The longest prefix ``prompt`` shares with an earlier prompt of ``key``
        (which it then joins), in tokens."""
        earlier = self._prompts[key]
        shared = max((_common_prefix(prompt, e) for e in earlier), default=0)
        earlier.append(prompt)
        return tokens(shared)


class OpenAICache(_PrefixCache):
    def read(self, body: dict[str, Any]) -> tuple[int, int]:
        """(cached, written) tokens for a Responses request."""
        pieces = [body.get("instructions") or ""]
        pieces += [_piece(tool) for tool in body.get("tools") or []]
        pieces += [_piece(item) for item in body.get("input") or []]
        prompt = "".join(pieces)
        key = body.get("prompt_cache_key") or (
            "start:" + hashlib.sha256(prompt[:OPENAI_ROUTE_CHARS].encode()).hexdigest()
        )
        shared = self._longest_common((str(body.get("model")), str(key)), prompt)
        if not self.enabled or shared < MIN_TOKENS:
            return 0, 0
        return shared // OPENAI_STEP * OPENAI_STEP, 0


class GeminiCache(_PrefixCache):
    def read(self, body: dict[str, Any], model: str) -> tuple[int, int]:
        """(cached, written) tokens for a generateContent request."""
        pieces = [_piece(body.get("systemInstruction") or "")]
        pieces += [_piece(tool) for tool in body.get("tools") or []]
        pieces += [_piece(content) for content in body.get("contents") or []]
        shared = self._longest_common((model, ""), "".join(pieces))
        if not self.enabled or shared < MIN_TOKENS:
            return 0, 0
        return shared, 0


class AnthropicCache:
    def __init__(self) -> None:
        self.enabled = True
        self._written: set[tuple[str, str]] = set()

    def read(self, body: dict[str, Any]) -> tuple[int, int]:
        """(read, written) tokens for a Messages request."""
        model = str(body.get("model"))
        blocks = _anthropic_blocks(body)
        ends: list[int] = []  # each block's end, in characters
        keys: list[str] = []  # the hash of the prompt up to each block's end
        running = hashlib.sha256()
        length = 0
        for text, _ in blocks:
            running.update(text.encode())
            length += len(text)
            ends.append(length)
            keys.append(running.hexdigest())
        breakpoints = [i for i, (_, marked) in enumerate(blocks) if marked]
        if not self.enabled or not breakpoints:
            return 0, 0
        read = 0
        for mark in breakpoints:
            for index in range(mark, max(-1, mark - ANTHROPIC_LOOKBACK - 1), -1):
                if (model, keys[index]) in self._written:
                    read = max(read, ends[index])
                    break
        if tokens(read) < MIN_TOKENS:
            read = 0
        written = 0
        for mark in breakpoints:
            if ends[mark] > read and tokens(ends[mark]) >= MIN_TOKENS:
                self._written.add((model, keys[mark]))
                written = tokens(ends[mark]) - tokens(read)
        return tokens(read), written


def _anthropic_blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The prompt as blocks, in the order Anthropic caches it: each as its JSON
    (without ``cache_control``) and whether it carries a breakpoint."""
    blocks: list[tuple[str, bool]] = []

    def add(prefix: str, block: Any) -> None:
        if isinstance(block, dict):
            marked = "cache_control" in block
            block = {k: v for k, v in block.items() if k != "cache_control"}
        else:
            marked = False
        blocks.append((prefix + _piece(block), marked))

    for tool in body.get("tools") or []:
        add("tool:", tool)
    system = body.get("system") or []
    for block in [system] if isinstance(system, str) else system:
        add("system:", block)
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in [content] if isinstance(content, str) else content or []:
            add(f"{message.get('role')}:", block)
    return blocks
