"""A member who closes the page while the assistant is thinking still finds the
reply when they come back: under the real server (uvicorn), the turn outlives the
streaming request that started it."""

from __future__ import annotations

import json
import time
import urllib.request

import httpx

from tests.fakes.llm_server import Step, running_fake_llm
from tests.test_embedded_run import embedded_app_running, seeded_lines


def _json(request: urllib.request.Request) -> dict:
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_a_turn_finishes_after_its_streaming_client_went_away(tmp_path):
    with running_fake_llm() as fake:
        fake.script("openai", lambda body: Step(text="Aquí tienes.", delay=1.5))
        provider = {
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": f"{fake.base_url}/v1",
        }
        with embedded_app_running(
            tmp_path,
            extra_env=provider,
            seed_args=("--provider", "openai"),
            worker=False,
        ) as (base, seeded, _):
            started = _json(
                urllib.request.Request(
                    f"{base}/api/v1/conversations",
                    data=json.dumps({"agent": seeded_lines(seeded)["agent"]}).encode(),
                    headers={"Content-Type": "application/json"},
                )
            )
            url = f"{base}/api/v1/conversations/{started['conversation']}/messages"
            bearer = {"Authorization": f"Bearer {started['token']}"}

            # The page is closed once the member's message is stored.
            with httpx.stream(
                "POST",
                url,
                json={"text": "hola"},
                headers={**bearer, "Accept": "text/event-stream"},
                timeout=30,
            ) as response:
                assert next(response.iter_lines()) == "event: message"

            deadline = time.monotonic() + 15
            while True:
                messages = _json(urllib.request.Request(url, headers=bearer))[
                    "messages"
                ]
                if [m["role"] for m in messages] == ["member", "assistant"]:
                    break
                assert time.monotonic() < deadline, messages
                time.sleep(0.3)
            assert messages[-1]["text"] == "Aquí tienes."
