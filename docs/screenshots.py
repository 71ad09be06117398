"""Regenerate the README's screenshots (``make screenshots``): the member widget with
a short conversation and the staff inbox with requests waiting, at 1280 px.

The app runs as ``make run`` starts it (the embedded default with the offline demo
model, its data in a temporary directory), driven by Debian's Chromium through
Playwright, so the pictures show what a newcomer will see. The helpers are the
browser tests' own, so a change to how the app starts is made in one place."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
WIDTH, HEIGHT = 1280, 800

sys.path.insert(0, str(ROOT))

from tests.browser.chromium import chromium_launch  # noqa: E402
from tests.browser.test_accessibility import signed_in  # noqa: E402
from tests.browser.test_inbox import ask_for_a_freeze  # noqa: E402
from tests.browser.widget_kit import ask, open_widget, site  # noqa: E402
from tests.test_embedded_run import embedded_app_running, seeded_lines  # noqa: E402


def widget_screenshot(browser, base: str) -> Path:
    """A signed-in member's widget, open, after two questions."""
    page = browser.new_page(locale="es-ES", viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(site(base, "?member=socio-1001"))
    frame = open_widget(page)
    ask(frame, "¿Cuántos carbohidratos tiene el arroz blanco?")
    ask(frame, "¿Qué clases hay mañana?")
    path = IMAGES / "widget.png"
    page.screenshot(path=str(path))
    page.close()
    return path


def inbox_screenshot(browser, base: str, lines: dict[str, str]) -> Path:
    """The staff inbox with two members' freezes waiting for a decision."""
    ask_for_a_freeze(base, lines, "socio-1001", "Congela mi cuota del 1 al 10 de mayo")
    ask_for_a_freeze(base, lines, "socio-1003", "Freeze my membership from 1 to 10 May")
    page = signed_in(browser, base, lines, "staff", "/inbox/", WIDTH)
    page.locator("tr[data-status=pending]").first.wait_for()
    path = IMAGES / "inbox.png"
    page.screenshot(path=str(path))
    page.close()
    return path


def main() -> None:
    from playwright.sync_api import sync_playwright

    IMAGES.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as directory,
        embedded_app_running(Path(directory)) as (base, seeded, _),
        sync_playwright() as playwright,
    ):
        browser = chromium_launch(playwright)
        lines = seeded_lines(seeded)
        for path in (
            widget_screenshot(browser, base),
            inbox_screenshot(browser, base, lines),
        ):
            print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")
        browser.close()


if __name__ == "__main__":
    main()
