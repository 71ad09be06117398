"""The ASGI entry point: configured providers load at start-up, and what start-up
loaded is frozen out of the garbage collector's full collections."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, sys
import gymnasia.asgi
print(json.dumps({
    "openai": "openai" in sys.modules,
    "anthropic": "anthropic" in sys.modules,
    "frozen": gc.get_freeze_count(),
}))
"""


def _start(**keys: str) -> dict[str, object]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY"}
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env={**env, "DEBUG": "1", **keys},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def test_a_configured_provider_loads_at_start_up():
    loaded = _start(OPENAI_API_KEY="sk-test")

    assert loaded["openai"] is True
    assert loaded["anthropic"] is False
    assert isinstance(loaded["frozen"], int) and loaded["frozen"] > 10_000


def test_no_provider_sdk_loads_without_a_key():
    loaded = _start()

    assert loaded["openai"] is False
    assert loaded["anthropic"] is False
    assert isinstance(loaded["frozen"], int) and loaded["frozen"] > 10_000
