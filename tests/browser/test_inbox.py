"""The staff inbox in a real browser (headless Chromium driven by Playwright) against
the app as ``make run`` starts it: a member's request appears without a reload, staff
approve it, and it moves to done once the worker has executed and verified it."""

from __future__ import annotations

import json
import time
import urllib.request

import jwt

from tests.browser.chromium import ARTIFACTS, chromium_launch, needs_chromium
from tests.test_embedded_run import (  # noqa: F401  (the running app)
    embedded_app,
    seeded_lines,
)

pytestmark = needs_chromium


def post_json(url: str, body: dict, token: str | None = None) -> dict:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=headers
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_inbox_live_approval_in_a_browser(embedded_app):  # noqa: F811
    from playwright.sync_api import sync_playwright

    base, seeded, _ = embedded_app
    lines = seeded_lines(seeded)
    username, password = lines["staff"].split(" ")
    agent = lines["agent"]
    with sync_playwright() as playwright:
        browser = chromium_launch(playwright)
        page = browser.new_page(locale="es-ES")
        page.goto(f"{base}/admin/login/?next=/inbox/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("input[type=submit]")
        page.wait_for_url(f"{base}/inbox/")
        assert page.locator("tr[data-status=pending]").count() == 0

        token = jwt.encode(
            {"sub": "socio-1002", "aud": agent, "exp": int(time.time()) + 600},
            lines["identity secret"],
            algorithm="HS256",
        )
        started = post_json(
            f"{base}/api/v1/conversations", {"agent": agent, "identity_token": token}
        )
        reply = post_json(
            f"{base}/api/v1/conversations/{started['conversation']}/messages",
            {"text": "Congela mi cuota en agosto"},
            started["token"],
        )
        assert reply["messages"][-1]["text"].startswith("He enviado tu solicitud")

        row = page.locator("tr[data-status=pending]")
        row.wait_for(timeout=20_000)  # no reload: the list refreshes itself
        assert "Congela mi cuota en agosto" in row.inner_text()
        page.screenshot(path=str(ARTIFACTS / "inbox-pending.png"), full_page=True)
        row.locator("form[action$='/approve'] button").click()
        page.locator("tr[data-status=approved]").wait_for(timeout=10_000)

        page.goto(f"{base}/inbox/?status=succeeded")
        done = page.locator("tr[data-status=succeeded]")
        deadline = time.monotonic() + 60
        while done.count() == 0:
            assert time.monotonic() < deadline, "the approved request was not done"
            time.sleep(1)
            page.reload()
        page.screenshot(path=str(ARTIFACTS / "inbox-done.png"), full_page=True)
        browser.close()
