"""Debian's Chromium driven by Playwright: no browser download, headless."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium")


def chromium_launch(playwright: Any) -> Any:
    """A headless Chromium that reaches nothing but the app on loopback."""
    ARTIFACTS.mkdir(exist_ok=True)
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    )
