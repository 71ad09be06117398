"""The owners' Panel in a real browser (headless Chromium) against the app as
``make run`` starts it, with every address but the app's refused: its charts
are drawn from the page alone, on a desktop and on a phone, with no console
error, no serious WCAG violation (axe-core) and, on the phone, nothing
wider than the screen."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import jwt
import pytest

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.test_accessibility import grave_violations
from tests.browser.test_inbox import post_json

pytestmark = needs_chromium


def _a_conversation_with_a_request(base: str, lines: dict) -> None:
    """A member asks for a freeze (it waits for staff): the Panel has a
    conversation, its turns, and a request to draw."""
    agent = lines["agent"]
    token = jwt.encode(
        {"sub": "socio-1001", "aud": agent, "exp": int(time.time()) + 600},
        lines["identity secret"],
        algorithm="HS256",
    )
    started = post_json(
        f"{base}/api/v1/conversations", {"agent": agent, "identity_token": token}
    )
    post_json(
        f"{base}/api/v1/conversations/{started['conversation']}/messages",
        {"text": "Congela mi cuota en agosto"},
        started["token"],
    )


@pytest.mark.parametrize("width", [1280, 390])
def test_panel_draws_its_charts_offline(app, browser, width):
    base, lines, _directory = app
    _a_conversation_with_a_request(base, lines)
    host = urlsplit(base).netloc
    context = browser.new_context(
        locale="es-ES", viewport={"width": width, "height": 900}
    )
    refused: list[str] = []

    def only_the_app(route):
        if urlsplit(route.request.url).netloc == host:
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_app)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    username, password = lines["owner"].split(" ")
    page.goto(f"{base}/admin/login/?next=/admin/panel/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/panel/")

    charts = page.locator("figure.panel-chart svg")
    assert charts.count() >= 2  # conversations and calls; tokens and cost say why not
    # Each chart's title is above its own chart, not under it (where it read as
    # the next chart's title).
    for figure in page.locator("figure.panel-chart").all():
        caption = figure.locator("figcaption").bounding_box()
        drawn = figure.locator("svg, .chart-note").first.bounding_box()
        assert caption is not None and drawn is not None
        assert caption["y"] + caption["height"] <= drawn["y"] + 1
    # The offline demo model uses no tokens: said, instead of an empty 0 to 1 axis.
    for chart in ("tokens", "cost"):
        said = page.locator(f"#{chart}-chart .chart-note").inner_text()
        assert "modelo de demostración sin conexión" in said, said
        assert page.locator(f"#{chart}-chart svg").count() == 0
    assert page.locator("figure.panel-chart svg rect").count() >= 2
    assert page.locator("#calls-table a").count() >= 5
    box = charts.first.bounding_box()
    assert box is not None and 0 < box["width"] <= width
    wider = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wider <= 0, f"the page is {wider} px wider than the screen"
    page.screenshot(path=str(ARTIFACTS / f"panel-{width}.png"), full_page=True)
    assert grave_violations(page) == []  # axe-core: WCAG 2.1 A and AA
    assert errors == []
    assert refused == []  # the page asked for nothing outside the app
    context.close()
