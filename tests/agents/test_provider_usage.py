"""What each step cost, read from each provider's own usage report through the
real SDKs against the local fake, streamed and not: OpenAI counts cached tokens
inside ``input_tokens``, Anthropic leaves cache reads and writes out of its
``input_tokens``, Gemini counts its cached part inside the prompt's."""

from __future__ import annotations

import pytest

from agents.providers.base import Usage, UserText
from tests.agents.provider_kit import (
    PROVIDERS,
    last_body,
    open_provider,
    request_with,
    run_step,
)
from tests.fakes.llm_server import FakeLLM, Step
from tests.fakes.llm_usage import counted


@pytest.mark.anyio
@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize("provider_name", PROVIDERS)
async def test_a_steps_usage_is_the_providers_report(
    fake: FakeLLM, provider_name: str, streaming: bool
) -> None:
    # Gemini reports what it read from the cache, never a write.
    written = 20 if provider_name == "anthropic" else 0
    step = Step(
        text="Tomorrow's spinning class starts at 07:30.",
        tool_calls=[("call_1", "list_classes", {"date_from": "2026-12-07"})],
        cached=40,
        cache_written=written,
    )
    fake.script(provider_name, [step])
    async with open_provider(provider_name, fake.base_url, streaming=streaming) as p:
        _, done = await run_step(p, request_with(UserText("when?")))

    sent = counted(last_body(fake, provider_name), step)
    assert sent.input > 40 + written  # the request itself, then the cache
    assert done.usage == Usage(
        input_tokens=sent.input,
        cached_input_tokens=40,
        cache_write_tokens=written,
        output_tokens=sent.output,
    )
