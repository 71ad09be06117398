"""The owner's admin pages fit the screen, at 1,280 and 390 px, in Spanish and
English: the agent's page has no sideways scroll (its tools' table shows each
tool as words, short headings), stacks its tools on a phone with the mode on
screen, and the calls' list shows every column beside the filters."""

from __future__ import annotations

import re

import pytest

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.test_inbox import ask_for_a_freeze

pytestmark = needs_chromium

HEADING = {"es-ES": "Vale (min)", "en-US": "Valid (min)"}


def _owner_page(browser, base: str, lines: dict, locale: str, width: int):
    username, password = lines["owner"].split(" ")
    page = browser.new_page(locale=locale, viewport={"width": width, "height": 900})
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/")
    return page


def _wider(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


@pytest.mark.parametrize("locale", ["es-ES", "en-US"])
@pytest.mark.parametrize("width", [1280, 390])
def test_the_agents_page_fits_the_screen(app, browser, locale, width):
    base, lines, _ = app
    page = _owner_page(browser, base, lines, locale, width)
    page.goto(f"{base}/admin/agents/agent/")
    page.locator("#result_list tbody a").first.click()
    page.wait_for_selector(".tool-settings")

    assert _wider(page) <= 0, "the page scrolls sideways"
    freeze = page.locator(".tool-settings tr.form-row", has_text="freeze_membership")
    assert freeze.locator("select").count() == 1  # the mode only: no tool select
    mode = freeze.locator("td.field-mode select").bounding_box()
    assert mode is not None and 0 <= mode["x"] and mode["x"] + mode["width"] <= width
    if width == 1280:
        headings = page.locator(".tool-settings thead").inner_text().lower()
        assert HEADING[locale].lower() in headings
    else:  # stacked: each control under its heading's words
        assert page.locator(".tool-settings thead").is_visible() is False
        label = freeze.locator("td.field-approval_valid_minutes")
        assert label.get_attribute("data-label") == HEADING[locale]
    page.screenshot(
        path=str(ARTIFACTS / f"admin-agent-{locale}-{width}.png"), full_page=True
    )
    page.close()


@pytest.mark.parametrize("locale", ["es-ES", "en-US"])
def test_the_calls_list_shows_every_column_beside_the_filters(app, browser, locale):
    base, lines, _ = app
    ask_for_a_freeze(base, lines, "socio-1002", "Congela mi cuota del 1 al 10 de marzo")
    page = _owner_page(browser, base, lines, locale, 1280)
    page.goto(f"{base}/admin/tools/toolcalllog/")

    headers = page.locator("#result_list thead th")
    last = headers.nth(headers.count() - 1).bounding_box()
    filters = page.locator("#changelist-filter").bounding_box()
    assert last is not None and filters is not None
    assert last["x"] + last["width"] <= filters["x"], "a column is behind the filters"
    results = page.locator("#changelist-form .results")
    assert results.evaluate("e => e.scrollWidth - e.clientWidth") <= 0
    first = page.locator("#result_list tbody tr").first
    named = first.locator("td.field-conversation a").inner_text()
    # named by its member and its start as people write it, no ISO date
    assert re.fullmatch(
        r".+ · \w+ \d+ (de )?\w+( de \d{4}| \d{4})?, \d{2}:\d{2}", named
    ), named
    assert _wider(page) <= 0
    page.screenshot(path=str(ARTIFACTS / f"admin-calls-{locale}.png"), full_page=True)
    page.close()
