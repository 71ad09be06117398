"""The member widget across page loads (headless Chromium, as in ``test_widget``):
a reload, a page that signs the member in again or renews the token, a
conversation that expired: the right conversation, in order, and only what is
new counted as new."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.test_inbox import staff_inbox
from tests.browser.widget_kit import (
    ask,
    kept_session,
    open_widget,
    site,
    widget,
)
from tests.test_embedded_run import (
    ROOT,
    embedded_env,
)

pytestmark = needs_chromium


def test_widget_counts_no_read_reply_as_new_after_a_reload(app, browser):
    """A member who read the replies, closed the chat and went to another page of
    the gym's site sees no count of new messages on the launcher."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_context(locale="es-ES").new_page()
    page.goto(site(base, "?member=socio-1002"))
    frame = open_widget(page)
    ask(frame, "¿Cuántas calorías tiene el pollo?")
    ask(frame, "¿Qué clases tengo?")
    frame.locator("#close").click()

    page.reload()

    frame = widget(page)
    expect(frame.locator("#launcher")).to_be_visible()
    page.wait_for_timeout(1_000)  # time for the history to load
    expect(frame.locator("#unread")).to_be_hidden()
    expect(frame.locator("#launcher")).to_have_attribute("aria-label", "Abrir el chat")
    page.screenshot(path=str(ARTIFACTS / "widget-reloaded-closed.png"))
    page.context.close()


def test_widget_still_counts_a_reply_that_came_while_closed_after_a_reload(
    app, browser
):
    """A staff answer that arrives while the chat is closed is counted on the
    launcher, and still is on the next page of the gym's site."""
    from playwright.sync_api import expect

    base, lines, _ = app
    page = browser.new_context(locale="en-GB").new_page()
    page.goto(site(base, "?member=socio-1003"))
    frame = open_widget(page)
    ask(frame, "Freeze my membership in October")
    frame.locator("#close").click()
    staff = staff_inbox(browser, base, lines)
    row = staff.locator("tr[data-status=pending]", has_text="in October")
    row.locator("textarea[name=reason], input[name=reason]").first.fill("Temporada")
    row.locator("form[action$='/reject'] button").click()
    expect(frame.locator("#unread")).to_have_text("1", timeout=20_000)
    expect(frame.locator("#launcher")).to_have_attribute(
        "aria-label", "Open the chat (1 new message)"
    )

    page.reload()

    frame = widget(page)
    expect(frame.locator("#unread")).to_have_text("1", timeout=10_000)
    page.context.close()
    staff.close()


def identity_token(lines: dict, member: str) -> str:
    """A fresh identity token for a demo member, as the gym's back end signs it."""
    import jwt

    claims = {"sub": member, "aud": lines["agent"], "exp": int(time.time()) + 600}
    return jwt.encode(claims, lines["identity secret"], algorithm="HS256")


def test_widget_lets_a_member_write_once_the_page_signs_them_in_again(app, browser):
    """After an expired sign-in was refused, the gym's page signs the member in
    again with ``Gymnasia.identify``: the member can write, as that member."""
    from playwright.sync_api import expect

    base, lines, _ = app
    page = browser.new_page(locale="es-ES")
    page.goto(site(base, "?member=socio-1001&expired=1"))
    frame = widget(page)
    frame.locator("#launcher").click()
    expect(frame.locator("#text")).to_be_disabled()

    page.evaluate(
        "token => window.Gymnasia.identify(token)", identity_token(lines, "socio-1001")
    )

    expect(frame.locator("#alert")).to_be_hidden()
    expect(frame.locator("#text")).to_be_enabled()
    expect(frame.locator("#send")).to_be_enabled()
    reply = ask(frame, "¿Cómo va mi cuota?")
    assert "Cuota mensual" in reply.inner_text()
    page.close()


def test_widget_keeps_the_conversation_when_the_page_renews_the_members_token(
    app, browser
):
    """A page that hands over a renewed token for the same member (tokens last at
    most an hour) keeps the member's conversation on screen and going."""
    from playwright.sync_api import expect

    base, lines, _ = app
    page = browser.new_page(locale="es-ES")
    page.goto(site(base, "?member=socio-1002"))
    frame = open_widget(page)
    ask(frame, "¿Qué clases tengo?")

    page.evaluate(
        "token => window.Gymnasia.identify(token)", identity_token(lines, "socio-1002")
    )

    page.wait_for_timeout(500)  # time for the panel to act on it
    expect(frame.locator("#log > li")).to_have_count(2)
    ask(frame, "¿Cómo va mi cuota?")
    expect(frame.locator("#log > li")).to_have_count(4)
    page.close()


def test_widget_keeps_the_order_when_the_member_writes_before_the_history_loads(
    app, browser
):
    """A member who writes right after a reload, before the earlier messages have
    been read again, sees them above the new message, in order."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_context(locale="es-ES").new_page()
    page.goto(site(base))
    frame = open_widget(page)
    ask(frame, "¿Cuántas calorías tiene el pollo?")
    held: list = []
    holding = [True]

    def hold_history(route):
        if route.request.method == "GET" and holding[0]:
            held.append(route)
        else:
            route.continue_()

    page.route("**/api/v1/conversations/*/messages*", hold_history)
    page.reload()
    frame = widget(page)
    expect(frame.locator("#text")).to_be_visible()
    deadline = time.monotonic() + 10
    while not held:
        assert time.monotonic() < deadline, "the history was not asked for"
        page.wait_for_timeout(50)

    frame.locator("#text").fill("¿Y el arroz?")
    frame.locator("#text").press("Enter")
    page.wait_for_timeout(1_500)  # time for a reply, were it sent at once
    holding[0] = False
    for route in held:
        route.continue_()

    items = frame.locator("#log > li")
    expect(items).to_have_count(4, timeout=20_000)
    expect(frame.locator("#log li[data-role=member] .text")).to_have_text(
        ["¿Cuántas calorías tiene el pollo?", "¿Y el arroz?"]
    )
    assert [items.nth(i).get_attribute("data-role") for i in range(4)] == [
        "member",
        "assistant",
        "member",
        "assistant",
    ]
    assert "Arroz" in items.nth(3).inner_text()
    page.context.close()


def expire_conversation_token(directory, page, agent: str) -> None:
    """Replace the kept conversation's token by one issued 13 hours ago (tokens
    last 12), as a member who comes back the next day has."""
    session = kept_session(page, agent)
    made = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "import datetime, time_machine\n"
            "from django.utils import timezone\n"
            "from agents.conversations import conversation_token\n"
            "from agents.models import Conversation\n"
            "c = Conversation.objects.get(pk="
            f"{session['conversation']!r})\n"
            "with time_machine.travel(timezone.now() - datetime.timedelta(hours=13)):\n"
            "    print(conversation_token(c)[0])",
        ],
        cwd=ROOT,
        env=embedded_env(directory),
        check=True,
        capture_output=True,
        text=True,
    )
    session["token"] = made.stdout.split()[-1]
    page.evaluate(
        """([key, session]) => {
          const kept = JSON.parse(sessionStorage.getItem(key));
          kept.session = session;
          sessionStorage.setItem(key, JSON.stringify(kept));
        }""",
        [f"gymnasia-widget:{agent}", session],
    )


def test_widget_says_at_once_in_the_members_language_that_a_conversation_expired(
    app, browser
):
    """A member who comes back after the conversation's token expired is told at
    once, in her language, that the earlier conversation has expired, and can
    start a new one by writing."""
    from playwright.sync_api import expect

    base, lines, directory = app
    page = browser.new_context(locale="es-ES").new_page()
    page.goto(site(base, "?member=socio-1003"))  # Emma, who speaks English
    frame = open_widget(page)
    ask(frame, "How is my membership?")
    expire_conversation_token(directory, page, lines["agent"])

    page.reload()

    frame = widget(page)
    expect(frame.locator("#alert")).to_have_text(
        "Your earlier conversation has expired; what you write now starts a new one.",
        timeout=10_000,
    )
    expect(frame.locator("#log > li")).to_have_count(0)
    expect(frame.locator("#send")).to_have_text("Send")
    expect(frame.locator("#text")).to_be_enabled()
    page.screenshot(path=str(ARTIFACTS / "widget-expired-on-reload.png"))
    reply = ask(frame, "How is my membership?")
    assert "Cuota mensual" in reply.inner_text()
    expect(frame.locator("#alert")).to_be_hidden()
    expect(frame.locator("#log > li")).to_have_count(2)
    page.context.close()
