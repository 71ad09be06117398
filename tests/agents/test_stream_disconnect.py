"""A member who closes the page while the assistant is thinking still finds the
reply when they come back: under the real server (uvicorn), the turn outlives the
streaming request that started it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import httpx
import pytest

from tests.fakes.llm_server import Step, running_fake_llm
from tests.test_embedded_run import ROOT, embedded_env, free_port


def _json(request: urllib.request.Request) -> dict:
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_a_turn_finishes_after_its_streaming_client_went_away(tmp_path):
    with running_fake_llm() as fake:
        fake.script("openai", lambda body: Step(text="Aquí tienes.", delay=1.5))
        env = embedded_env(tmp_path)
        env.update(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=f"{fake.base_url}/v1")
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        seeded = subprocess.run(
            [*manage, "seed_demo", "--provider", "openai"],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        agent = next(
            line.split(": ")[1]
            for line in seeded.splitlines()
            if line.startswith("agent")
        )
        port = free_port()
        server = subprocess.Popen(
            [*manage, "serve", "--no-worker", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(f"{base}/healthz", timeout=2)
                    break
                except OSError:
                    assert time.monotonic() < deadline, "the server did not start"
                    time.sleep(0.2)
            started = _json(
                urllib.request.Request(
                    f"{base}/api/v1/conversations",
                    data=json.dumps({"agent": agent}).encode(),
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
                first = next(response.iter_lines())
                assert first == "event: message"

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
        finally:
            server.terminate()
            server.wait(timeout=20)


pytestmark = pytest.mark.skipif(
    os.name != "posix", reason="starts the server as make run does"
)
