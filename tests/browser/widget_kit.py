"""What the widget's browser tests share: the demo site, the widget's frame, a
message asked and its reply, a scripted stream, and the conversation the page keeps."""

from __future__ import annotations

import json
import urllib.request


def site(base: str, query: str = "") -> str:
    return base.replace("127.0.0.1", "localhost") + "/demo/" + query


def widget(page):
    return page.frame_locator("iframe[data-gymnasia-widget]")


def open_widget(page):
    frame = widget(page)
    frame.locator("#launcher").click()
    frame.locator("#text").wait_for()
    return frame


def ask(frame, text: str):
    """Send a message and return the reply that follows it."""
    from playwright.sync_api import expect

    replies = frame.locator("#log li[data-role=assistant], #log li[data-role=notice]")
    before = replies.count()
    frame.locator("#text").fill(text)
    frame.locator("#text").press("Enter")
    expect(replies).to_have_count(before + 1, timeout=20_000)
    return replies.last


def sse(*events: tuple[str, dict]) -> str:
    return "".join(
        f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
        for name, data in events
    )


def kept_session(page, agent: str) -> dict:
    """The conversation the gym's page keeps for the widget (its sessionStorage)."""
    kept = page.evaluate(f"() => sessionStorage.getItem('gymnasia-widget:{agent}')")
    return json.loads(kept)["session"]


def history(base: str, session: dict) -> list[dict]:
    """The conversation's messages as the API gives them."""
    request = urllib.request.Request(
        f"{base}/api/v1/conversations/{session['conversation']}/messages",
        headers={"Authorization": f"Bearer {session['token']}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["messages"]
