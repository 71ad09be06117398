"""axe-core's WCAG 2.1 A and AA rules, run in headless Chromium at a desktop's
width and a phone's, on the member's widget (closed and open), the staff inbox
with requests waiting, its cases, and the owner's agent page in admin; and what
axe cannot see: the inbox fits a phone, names each control by its request, tells
of a new request once, and says in place when a decision lost a race."""

from __future__ import annotations

import pytest

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.test_inbox import (
    ask_for_a_freeze,
    hand_over_an_unknown_outcome,
    signed_in,
)
from tests.browser.widget_kit import open_widget, site, widget

pytestmark = needs_chromium

WCAG_21_AA = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}
}
WIDTHS = [1280, 390]


def grave_violations(target) -> list[tuple[str, str, list]]:
    """axe-core's critical and serious violations on a page or frame."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(target, options=WCAG_21_AA)
    return [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:5])
        for v in results.response["violations"]
        if v["impact"] in ("critical", "serious")
    ]


def fits(page) -> bool:
    return page.evaluate(
        "() => document.documentElement.scrollWidth <= window.innerWidth"
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_widget_passes_axe_closed_and_open(app, browser, width):
    base, _, _ = app
    page = browser.new_page(locale="es-ES", viewport={"width": width, "height": 800})
    page.goto(site(base))
    widget(page).locator("#launcher").wait_for()
    [frame] = [f for f in page.frames if "/widget/" in f.url]
    assert grave_violations(frame) == []
    open_widget(page)
    assert grave_violations(frame) == []
    page.screenshot(path=str(ARTIFACTS / f"a11y-widget-open-{width}.png"))
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_inbox_and_its_cases_pass_axe_and_fit_the_screen(app, browser, width):
    """With requests and a case waiting, nothing is wider than the screen (each
    request a card on a phone) and axe finds nothing critical or serious."""
    from playwright.sync_api import expect

    base, lines, directory = app
    ask_for_a_freeze(base, lines, "socio-1001", "Congela mi cuota del 1 al 10 de mayo")
    hand_over_an_unknown_outcome(directory, "socio-1002")
    page = signed_in(browser, base, lines, "staff", "/inbox/", width)
    expect(page.locator("tr[data-status=pending]").first).to_be_visible()

    assert fits(page)
    assert grave_violations(page) == []
    page.screenshot(path=str(ARTIFACTS / f"a11y-inbox-{width}.png"), full_page=True)
    approve = page.locator("tr[data-status=pending] button.approve").first
    box = approve.bounding_box()
    assert box is not None and box["x"] + box["width"] <= width
    reject = page.locator("tr[data-status=pending] button.reject").first
    box = reject.bounding_box()
    assert box is not None and box["height"] >= 44 and box["width"] >= 44

    page.goto(f"{base}/inbox/handoffs/")
    expect(page.locator("#handoffs tbody tr").first).to_be_visible()
    assert fits(page)
    assert grave_violations(page) == []
    page.screenshot(path=str(ARTIFACTS / f"a11y-handoffs-{width}.png"), full_page=True)
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_owners_agent_page_passes_axe(app, browser, width):
    """Each control of the thirteen tool rows has a name that says its tool."""
    base, lines, _ = app
    page = signed_in(browser, base, lines, "owner", "/admin/agents/agent/", width)
    page.locator("#result_list tbody th a").first.click()
    page.wait_for_url("**/change/")

    assert grave_violations(page) == []
    mode = page.get_by_role("combobox", name="Modo: Congelar la cuota", exact=True)
    assert mode.count() == 1
    page.close()


def test_inbox_controls_name_their_request(app, browser):
    base, lines, _ = app
    ask_for_a_freeze(base, lines, "socio-1003", "Freeze my membership from 1 to 10 May")
    page = signed_in(browser, base, lines, "staff", "/inbox/", 390)
    name = "Congelar la cuota — Emma Clarke"
    for role, words in [
        ("checkbox", "Seleccionar"),
        ("button", "Aprobar"),
        ("textbox", "Motivo"),
        ("button", "Rechazar"),
    ]:
        control = page.get_by_role(role, name=f"{words}: {name}", exact=True)
        assert control.count() >= 1, (role, words)
    page.close()


#: What a screen reader is told by the inbox's status line: each text it takes.
NEWS = """
window.announced = [];
document.addEventListener("DOMContentLoaded", () => {
  const news = document.getElementById("inbox-news");
  new MutationObserver(() => window.announced.push(news.textContent))
    .observe(news, { childList: true, characterData: true, subtree: true });
});
"""


def test_a_new_request_is_announced_once(app, browser):
    """A request that arrives while the inbox is open is told once by the page's
    polite status line, which is not replaced by the list's refreshes."""
    from playwright.sync_api import expect

    base, lines, _ = app
    page = signed_in(browser, base, lines, "staff", "/inbox/", 1280)
    page.add_init_script(NEWS)
    page.reload()
    news = page.locator("#inbox-news")
    expect(news).to_have_attribute("role", "status")
    news.evaluate("e => { e.kept = true; }")

    ask_for_a_freeze(base, lines, "socio-1002", "Congela mi cuota del 1 al 10 de junio")
    page.wait_for_function("() => window.announced.length > 0", timeout=20_000)
    page.wait_for_timeout(6_000)  # past another refresh

    assert page.evaluate("window.announced") == [
        "Nueva solicitud: Congelar la cuota — Pablo Navarro"
    ]
    assert news.evaluate("e => e.kept") is True  # the same line, never replaced
    page.close()


#: A request approved, then running or done: the worker may take it at once.
DECIDED_YES = (
    "tr:is([data-status=approved], [data-status=executing], [data-status=succeeded])"
)


def test_a_decision_that_lost_the_race_says_so_in_its_row(app, browser):
    """Two people have the same request open; the owner approves it first. The
    staff member's Reject then shows, in that row at once, who decided and that
    the rejection was not applied."""
    from playwright.sync_api import expect

    base, lines, _ = app
    ask_for_a_freeze(base, lines, "socio-1001", "Congela mi cuota del 3 al 9 de junio")
    staff = signed_in(browser, base, lines, "staff", "/inbox/", 390)
    owner = signed_in(browser, base, lines, "owner", "/inbox/", 1280)
    mine = staff.locator("tr[data-status=pending]", has_text="3 al 9 de junio")
    mine.locator("input[name=reason]").fill("No")  # the list waits meanwhile

    owner.locator("tr[data-status=pending]", has_text="3 al 9 de junio").locator(
        "button.approve"
    ).click()
    owner.locator(DECIDED_YES).first.wait_for()
    mine.locator("button.reject").click()

    row = staff.locator(DECIDED_YES, has_text="3 al 9 de junio")
    expect(row.locator(".lost")).to_have_text(
        "demo-owner ha decidido antes; tu decisión no se ha aplicado."
    )
    staff.screenshot(path=str(ARTIFACTS / "a11y-inbox-race-lost.png"), full_page=True)
    staff.close()
    owner.close()
