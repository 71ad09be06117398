"""The fake APIs' prompt caches follow the real APIs' rules (characters / 4 as
tokens): OpenAI's common prefix per key in 128-token steps from 1,024 tokens,
Anthropic's breakpoints written then read, Gemini's implicit prefix from 1,024."""

from __future__ import annotations

from typing import Any

from tests.fakes.llm_cache import AnthropicCache, GeminiCache, OpenAICache


def text(n: int, letter: str = "a") -> str:
    """A text of ``n`` tokens (4 characters each)."""
    return letter * (4 * n)


def openai_body(instructions: str, *inputs: str, key: str = "") -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-test",
        "instructions": instructions,
        "input": [{"role": "user", "content": i} for i in inputs],
    }
    if key:
        body["prompt_cache_key"] = key
    return body


def test_openai_caches_a_shared_prefix_in_128_token_steps_from_1024():
    cache = OpenAICache()
    assert cache.read(openai_body(text(2000), "hola", key="k")) == (0, 0)
    # The instructions (2,000 tokens) and the item's opening (7 tokens) are
    # shared: 2,007 tokens, cached in whole steps of 128.
    assert cache.read(openai_body(text(2000), "adiós", key="k")) == (1920, 0)


def test_openai_caches_nothing_under_1024_tokens_or_for_another_key():
    cache = OpenAICache()
    cache.read(openai_body(text(1000), "hola", key="k"))
    assert cache.read(openai_body(text(1000), "hola", key="k")) == (0, 0)
    cache.read(openai_body(text(3000), "hola", key="k"))
    assert cache.read(openai_body(text(3000), "hola", key="other")) == (0, 0)
    # Without a key, requests whose start is the same are compared.
    cache.read(openai_body(text(3000), "hola"))
    assert cache.read(openai_body(text(3000), "hola")) == (2944, 0)


def test_openai_caches_nothing_when_disabled():
    cache = OpenAICache()
    cache.enabled = False
    cache.read(openai_body(text(3000), "hola", key="k"))
    assert cache.read(openai_body(text(3000), "hola", key="k")) == (0, 0)


def anthropic_body(system: str, *said: str, marks: bool = True) -> dict[str, Any]:
    mark = {"cache_control": {"type": "ephemeral"}} if marks else {}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": t}]} for t in said
    ]
    if messages:
        messages[-1]["content"][-1].update(mark)
    return {
        "model": "claude-test",
        "system": [{"type": "text", "text": system, **mark}],
        "messages": messages,
    }


def test_anthropic_writes_what_breakpoints_mark_then_reads_it():
    cache = AnthropicCache()
    read, written = cache.read(anthropic_body(text(2000), "hola"))
    assert read == 0 and written >= 2000
    # The same prefix, then more: the last breakpoint's prefix, found by looking
    # back from the new latest block, is read; the rest up to it is written.
    read, written_after = cache.read(anthropic_body(text(2000), "hola", "otra"))
    assert read == written and written_after > 0


def test_anthropic_caches_nothing_without_breakpoints_or_under_1024_tokens():
    cache = AnthropicCache()
    for _ in range(2):
        assert cache.read(anthropic_body(text(3000), "hola", marks=False)) == (0, 0)
        assert cache.read(anthropic_body(text(500), "hola")) == (0, 0)


def gemini_body(system: str, *said: str) -> dict[str, Any]:
    return {
        "systemInstruction": {"parts": [{"text": system}]},
        "contents": [{"role": "user", "parts": [{"text": t}]} for t in said],
    }


def test_gemini_reads_a_repeated_prefix_from_1024_tokens():
    cache = GeminiCache()
    assert cache.read(gemini_body(text(1500), "hola"), "m") == (0, 0)
    cached, written = cache.read(gemini_body(text(1500), "hola", "otra"), "m")
    assert cached >= 1500 and written == 0
    cache.read(gemini_body(text(900), "hola"), "m")
    assert cache.read(gemini_body(text(900), "adiós"), "m") == (0, 0)
    assert cache.read(gemini_body(text(1500), "hola"), "another model") == (0, 0)
