"""The member widget's layout and what assistive technology is told (headless
Chromium, as in ``test_widget``): a phone used by keyboard, the gym's page
clickable around the closed launcher, and each message announced once."""

from __future__ import annotations

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.widget_kit import (
    ask,
    history,
    kept_session,
    open_widget,
    site,
    widget,
)

pytestmark = needs_chromium


def test_widget_on_a_phone_by_keyboard(app, browser):
    """On a phone-sized screen the open panel fills the screen; the keyboard opens
    it, sends, and closes it with Escape, returning focus to the launcher."""
    from playwright.sync_api import expect

    base, _, _ = app
    context = browser.new_context(
        locale="es-ES", viewport={"width": 390, "height": 760}, is_mobile=True
    )
    page = context.new_page()
    page.goto(site(base))
    frame = widget(page)
    iframe = page.locator("iframe[data-gymnasia-widget]")
    expect(frame.locator("#launcher")).to_have_attribute("aria-label", "Abrir el chat")

    frame.locator("#launcher").focus()
    page.keyboard.press("Enter")

    expect(frame.locator("#panel")).to_be_visible()
    assert frame.locator("body").evaluate("() => document.activeElement.id") == "text"
    box = iframe.bounding_box()
    assert box is not None and box["width"] == 390 and box["height"] == 760
    page.keyboard.type("¿Cuántos carbohidratos tiene el arroz?")
    page.keyboard.press("Enter")
    expect(frame.locator("#log li[data-role=assistant]")).to_have_count(
        1, timeout=20_000
    )
    page.screenshot(path=str(ARTIFACTS / "widget-phone.png"))

    page.keyboard.press("Escape")

    expect(frame.locator("#panel")).to_be_hidden()
    assert (
        frame.locator("body").evaluate("() => document.activeElement.id") == "launcher"
    )
    box = iframe.bounding_box()
    assert box is not None and box["width"] == 56
    context.close()


#: A link of the gym's page after the widget's iframe: where Tab goes from the
#: panel's last control when nothing keeps the focus inside.
BEHIND = """() => document.body.insertAdjacentHTML(
  "beforeend", '<a href="#behind" id="behind">Behind</a>')"""


def focus_in_the_panel(page, frame) -> bool:
    """Whether the gym's page has the focus in the widget's iframe and, there, on
    a control of the open panel."""
    in_frame = page.evaluate(
        "() => document.activeElement.matches('iframe[data-gymnasia-widget]')"
    )
    return in_frame and frame.locator("body").evaluate(
        "() => document.getElementById('panel').contains(document.activeElement)"
    )


def test_widget_on_a_phone_keeps_the_focus_inside_while_open(app, browser):
    """Full-screen on a phone, the open panel is a modal dialog: Tab and Shift+Tab
    go round its own controls, never to the gym's page behind it nor to the
    hidden launcher; closing it gives the focus back to the launcher."""
    from playwright.sync_api import expect

    base, _, _ = app
    context = browser.new_context(
        locale="es-ES", viewport={"width": 390, "height": 760}, is_mobile=True
    )
    page = context.new_page()
    page.goto(site(base))
    page.evaluate(BEHIND)
    frame = widget(page)
    frame.locator("#launcher").focus()
    page.keyboard.press("Enter")
    expect(frame.locator("#panel")).to_have_attribute("aria-modal", "true")
    expect(frame.locator("#launcher")).to_be_hidden()

    for key in ["Tab"] * 6 + ["Shift+Tab"] * 6:
        page.keyboard.press(key)
        assert focus_in_the_panel(page, frame), key

    page.keyboard.press("Escape")
    expect(frame.locator("#panel")).to_be_hidden()
    assert frame.locator("body").evaluate("() => document.activeElement.id") == (
        "launcher"
    )
    context.close()


def test_widget_beside_the_page_is_not_modal(app, browser):
    """On a wide screen the open panel sits beside the gym's page, which stays
    usable: the dialog is not modal, and Tab may leave it for the page."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_page(locale="es-ES", viewport={"width": 1280, "height": 800})
    page.goto(site(base))
    page.evaluate(BEHIND)
    frame = open_widget(page)
    expect(frame.locator("#panel")).to_be_visible()
    assert frame.locator("#panel").get_attribute("aria-modal") is None
    frame.locator("#send").focus()

    page.keyboard.press("Tab")

    assert page.evaluate("() => document.activeElement.id") == "behind"
    page.close()


def test_widget_closed_leaves_the_gyms_page_clickable_around_the_launcher(app, browser):
    """While the chat is closed, only the round launcher takes clicks: a button of
    the gym's page in the same corner can be clicked right next to it."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_page(locale="es-ES", viewport={"width": 800, "height": 600})
    page.goto(site(base))
    frame = widget(page)
    expect(frame.locator("#launcher")).to_be_visible()
    page.evaluate(
        """() => {
          const button = document.createElement("button");
          button.textContent = "Contact us";
          Object.assign(button.style, {
            position: "fixed", right: "0", bottom: "0", width: "140px", height: "140px"
          });
          window.clicks = 0;
          button.addEventListener("click", () => { window.clicks += 1; });
          document.body.appendChild(button);
        }"""
    )
    box = frame.locator("#launcher").bounding_box()
    assert box is not None
    x, y, radius = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, 28
    step = (radius + 3) / 2**0.5  # just outside the round button, diagonally
    around = [(x + dx * step, y + dy * step) for dx in (-1, 1) for dy in (-1, 1)]
    around += [(798, 598), (714, 598), (798, 514), (714, 514), (x, 598)]

    for point in around:
        page.mouse.click(*point)

    assert page.evaluate("() => window.clicks") == len(around)
    expect(frame.locator("#panel")).to_be_hidden()
    page.mouse.click(x, y)
    expect(frame.locator("#panel")).to_be_visible()
    assert page.evaluate("() => window.clicks") == len(around)
    page.close()


ANNOUNCEMENTS = """
if (location.pathname.startsWith("/widget/")) {
  // What a screen reader is told: messages added inside a live region.
  window.announced = [];
  window.restoredQuietly = [];
  new MutationObserver((records) => {
    for (const record of records) {
      const region = record.target.closest && record.target.closest("[aria-live]");
      const live = region && region.getAttribute("aria-live") !== "off";
      for (const node of record.addedNodes) {
        if (node.nodeType !== 1) continue;
        const items = node.matches("li.message") ? [node] : [
          ...node.querySelectorAll("li.message")
        ];
        for (const item of items) {
          const text = item.querySelector(".text").textContent;
          (live ? window.announced : window.restoredQuietly).push(text);
        }
      }
    }
  }).observe(document, { childList: true, subtree: true });
}
"""


def test_widget_does_not_announce_the_history_again_after_a_reload(app, browser):
    """The conversation's log is a live region: a new reply is announced to a
    screen reader, but the history shown again after a reload is not. (What is
    announced is what the page adds inside a live region while it is live; the
    test records that, as a browser does, since a screen reader is not at hand.)"""
    from playwright.sync_api import expect

    base, _, _ = app
    context = browser.new_context(locale="es-ES")
    context.add_init_script(ANNOUNCEMENTS)
    page = context.new_page()
    page.goto(site(base))
    frame = open_widget(page)
    ask(frame, "¿Cuántas calorías tiene el pollo?")

    page.reload()

    frame = widget(page)
    expect(frame.locator("#log > li")).to_have_count(2)
    expect(frame.locator("#log-region")).to_have_attribute("aria-live", "polite")
    body = frame.locator("body")
    assert body.evaluate("() => window.announced") == []
    assert len(body.evaluate("() => window.restoredQuietly")) == 2
    reply = ask(frame, "¿Y el arroz?")
    assert reply.locator(".text").text_content() in body.evaluate(
        "() => window.announced"
    )
    page.context.close()


def test_widget_announces_the_members_own_message_once(app, browser):
    """The member's message, shown at once while it is sent, is read out once by a
    screen reader: when it is stored, that same entry of the log becomes the stored
    message (its id, no longer marked as being sent), never a second entry in the
    live region."""
    from playwright.sync_api import expect

    base, lines, _ = app
    context = browser.new_context(locale="es-ES")
    context.add_init_script(ANNOUNCEMENTS)
    page = context.new_page()
    page.goto(site(base))
    frame = open_widget(page)

    reply = ask(frame, "¿Cuántas proteínas tiene el pollo?")

    announced = frame.locator("body").evaluate("() => window.announced")
    assert announced.count("¿Cuántas proteínas tiene el pollo?") == 1
    assert reply.locator(".text").text_content() in announced
    mine = frame.locator("#log li[data-role=member]")
    expect(mine).to_have_count(1)
    stored = history(base, kept_session(page, lines["agent"]))
    assert mine.get_attribute("data-id") == stored[0]["id"]
    assert "sending" not in (mine.get_attribute("class") or "")
    page.context.close()
