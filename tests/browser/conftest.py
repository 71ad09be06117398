"""What the browser tests share: one headless Chromium and one app, as ``make
run`` starts it, for every test of the package (a start costs seconds)."""

from __future__ import annotations

import pytest

from tests.browser.chromium import chromium_launch
from tests.test_embedded_run import (
    embedded_app_running,
    seeded_lines,
)


@pytest.fixture(scope="package")
def app(tmp_path_factory):
    directory = tmp_path_factory.mktemp("widget-app")
    with embedded_app_running(directory) as (base, seeded, _):
        yield base, seeded_lines(seeded), directory


@pytest.fixture(scope="package")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = chromium_launch(playwright)
        yield chromium
        chromium.close()
