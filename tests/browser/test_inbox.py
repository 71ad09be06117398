"""The staff inbox in a real browser (headless Chromium driven by Playwright) against
the app as ``make run`` starts it: a member's request appears without a reload, staff
approve it, and it moves to done once the worker has executed and verified it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request

import jwt

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.test_embedded_run import (  # noqa: F401  (the running app)
    ROOT,
    embedded_app,
    embedded_env,
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


def signed_in(
    browser,
    base: str,
    lines: dict,
    who: str,
    path: str,
    width: int = 1280,
    locale: str = "es-ES",
):
    """A new page at ``path``, signed in as the demo's ``who`` (owner, staff)."""
    username, password = lines[who].split(" ")
    page = browser.new_page(locale=locale, viewport={"width": width, "height": 800})
    page.goto(f"{base}/admin/login/?next={path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}{path}")
    return page


def staff_inbox(browser, base: str, lines: dict):
    """A new page of the inbox, signed in as the demo's staff."""
    return signed_in(browser, base, lines, "staff", "/inbox/")


def test_inbox_live_approval_in_a_browser(embedded_app, browser):  # noqa: F811

    base, seeded, _ = embedded_app
    lines = seeded_lines(seeded)
    agent = lines["agent"]
    page = staff_inbox(browser, base, lines)
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
    page.close()


def ask_for_a_freeze(
    base: str, lines: dict, member: str, text: str, earlier: list[str] = ()
) -> tuple[str, str]:
    """A new conversation of the member: the ``earlier`` messages, then
    ``text``; its id and token."""
    token = jwt.encode(
        {"sub": member, "aud": lines["agent"], "exp": int(time.time()) + 600},
        lines["identity secret"],
        algorithm="HS256",
    )
    started = post_json(
        f"{base}/api/v1/conversations",
        {"agent": lines["agent"], "identity_token": token},
    )
    for message in [*earlier, text]:
        post_json(
            f"{base}/api/v1/conversations/{started['conversation']}/messages",
            {"text": message},
            started["token"],
        )
    return started["conversation"], started["token"]


def test_a_rows_approve_decides_that_row_only(embedded_app, browser):  # noqa: F811
    """On a freshly loaded inbox, a row's Approve approves that request, not the
    ones ticked for "Approve selected"; that button approves the ticked ones."""
    from playwright.sync_api import expect

    base, seeded, _ = embedded_app
    lines = seeded_lines(seeded)
    ask_for_a_freeze(base, lines, "socio-1001", "Congela mi cuota del 1 al 10 de mayo")
    ask_for_a_freeze(base, lines, "socio-1003", "Freeze my membership from 1 to 10 May")
    page = staff_inbox(browser, base, lines)
    emma = page.locator("tr[data-status=pending]", has_text="Emma Clarke")
    lucia = page.locator("tr[data-status=pending]", has_text="Lucía Romero")
    expect(emma).to_have_count(1)
    header_count = page.locator("#inbox-link")
    expect(header_count).to_have_text(re.compile(r"\(2\)$"))

    lucia.locator("input[name=ids]").check()
    emma.get_by_role(
        "button", name="Aprobar: Congelar la cuota — Emma Clarke", exact=True
    ).click()

    expect(
        page.locator("tr[data-status=approved]", has_text="Emma Clarke")
    ).to_have_count(1)
    # The header's count follows the decision, without a reload (before the
    # list's next refresh).
    expect(header_count).to_have_text(re.compile(r"\(1\)$"), timeout=2_000)
    expect(lucia).to_have_count(1)  # ticked, but not approved by Emma's button
    page.get_by_role("button", name="Aprobar las seleccionadas").click()
    page.wait_for_url(f"{base}/inbox/")
    expect(
        page.locator("tr[data-status=pending]", has_text="Lucía Romero")
    ).to_have_count(0)
    page.close()


def test_the_list_waits_while_staff_are_deciding(embedded_app, browser):  # noqa: F811
    """A reason being written and a ticked box survive the list's refresh: it
    waits for them, and refreshes again once they are gone."""
    from playwright.sync_api import expect

    base, seeded, _ = embedded_app
    lines = seeded_lines(seeded)
    ask_for_a_freeze(base, lines, "socio-1002", "Congela mi cuota del 1 al 10 de julio")
    page = staff_inbox(browser, base, lines)
    pablo = page.locator("tr[data-status=pending]", has_text="Pablo Navarro")
    pablo.locator("input[name=reason]").fill("Julio no")
    pablo.locator("input[name=ids]").check()
    page.locator("h1").click()  # the reason field no longer has the focus

    ask_for_a_freeze(base, lines, "socio-1003", "Freeze my membership in July")
    page.wait_for_timeout(7_000)  # past a refresh

    assert pablo.locator("input[name=reason]").input_value() == "Julio no"
    assert pablo.locator("input[name=ids]").is_checked()
    expect(page.locator("tr", has_text="Freeze my membership in July")).to_have_count(0)

    pablo.locator("input[name=reason]").fill("")
    pablo.locator("input[name=ids]").uncheck()
    page.locator("h1").click()
    expect(page.locator("tr", has_text="Freeze my membership in July")).to_have_count(
        1, timeout=10_000
    )
    page.close()


def test_a_request_opens_its_conversation_at_the_step_that_made_it(
    embedded_app,  # noqa: F811
    browser,
):
    """Behind a long conversation, the request's link opens the timeline scrolled
    to the step that made it, with its verification log, marked."""
    from playwright.sync_api import expect

    base, seeded, _ = embedded_app
    lines = seeded_lines(seeded)
    earlier = ["¿Qué clases hay mañana?", "¿Cuántos carbohidratos tiene el arroz?"] * 6
    ask_for_a_freeze(
        base, lines, "socio-1001", "Congela mi cuota del 1 al 10 de octubre", earlier
    )
    page = staff_inbox(browser, base, lines)
    row = page.locator("tr[data-status=pending]", has_text="1 al 10 de octubre")
    row.locator("a.conversation-link").click()
    page.wait_for_url("**/admin/agents/conversation/**")

    target = page.locator(".timeline-message:target")
    expect(target).to_have_count(1)
    assert "Congelar la cuota del " in target.inner_text()
    assert page.evaluate("window.scrollY") > 0
    expect(target).to_be_in_viewport()
    assert target.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
    page.screenshot(path=str(ARTIFACTS / "conversation-at-request.png"))
    page.close()


def hand_over_an_unknown_outcome(directory, member: str) -> None:
    """A case for staff as the harness makes one when a write's outcome is unknown
    (R9), written into the running app's database."""
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from gymnasia.gyms.models import Member\n"
            "from tools.models import ToolCallLog\n"
            "from tools.services import handoff_create\n"
            f"member = Member.objects.get(external_id={member!r})\n"
            "arguments = {'start': '2027-03-01', 'end': '2027-03-10'}\n"
            "log = ToolCallLog.objects.create(business=member.business, "
            "member=member, conversation_key='lost-turn', "
            "tool_name='freeze_membership', effect='write', arguments=arguments, "
            "offered=True, valid=True, status='unknown_outcome', "
            "verification='unverifiable')\n"
            "handoff_create(business=member.business, member=member, "
            "conversation_key='lost-turn', cause='no_answer', "
            "tried={'tool': 'freeze_membership', 'arguments': arguments}, "
            "tool_call=log)",
        ],
        cwd=ROOT,
        env=embedded_env(directory),
        check=True,
    )


def test_the_cases_list_keeps_the_outcome_staff_chose(embedded_app, browser):  # noqa: F811
    """What actually happened, once chosen for a case, survives the list's
    refresh: it waits, and refreshes again once the choice is undone. (It had
    been put back to "It was done" within 5 seconds, and Save then recorded, and
    told the member, what staff had not said.)"""
    from playwright.sync_api import expect

    base, seeded, log_path = embedded_app
    lines = seeded_lines(seeded)
    hand_over_an_unknown_outcome(log_path.parent, "socio-1001")
    page = staff_inbox(browser, base, lines)
    page.goto(f"{base}/inbox/handoffs/")
    case = page.locator("tr", has_text="No se ha podido confirmar: Congelar la cuota.")
    case.locator("select[name=resolution]").select_option("not_done")
    page.locator("h1").click()  # the choice no longer has the focus

    ask_for_a_person(base, lines, "socio-1003")
    page.wait_for_timeout(7_000)  # past a refresh

    chosen = case.locator("select[name=resolution]")
    assert chosen.input_value() == "not_done"
    expect(page.locator("tr", has_text="Emma Clarke")).to_have_count(0)
    page.screenshot(path=str(ARTIFACTS / "handoffs-deciding.png"), full_page=True)

    chosen.select_option("done")
    page.locator("h1").click()
    expect(page.locator("tr", has_text="Emma Clarke")).to_have_count(1, timeout=10_000)
    page.close()


def ask_for_a_person(base: str, lines: dict, member: str) -> None:
    ask_for_a_freeze(base, lines, member, "Quiero hablar con una persona")


def test_the_inbox_and_admin_run_under_a_strict_content_security_policy(
    embedded_app,  # noqa: F811
    browser,
):
    """The admin and inbox pages sent no Content-Security-Policy. They now allow
    only their own scripts (no inline script, no eval: the inbox's refresh check
    moved from htmx's trigger filter to a listener), and nothing is refused."""
    base, seeded, _ = embedded_app
    lines = seeded_lines(seeded)
    username, password = lines["owner"].split(" ")
    page = browser.new_page(locale="es-ES")
    refused = []
    page.on(
        "console",
        lambda message: (
            refused.append(message.text)
            if "Content Security Policy" in message.text
            else None
        ),
    )
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/")
    policies = []
    for path in (
        "/admin/",
        "/admin/agents/agent/",
        "/admin/tools/integration/add/",
        "/inbox/",
        "/inbox/handoffs/",
    ):
        response = page.goto(f"{base}{path}")
        policies.append(response.headers.get("content-security-policy", ""))
    page.wait_for_timeout(6_000)  # the inbox's lists refresh once meanwhile

    assert all("script-src 'self'" in policy for policy in policies), policies
    assert not any("unsafe-eval" in policy for policy in policies)
    assert refused == []
    assert page.locator("#handoffs").count() == 1


#: The browser's notifications, recorded instead of shown (headless Chromium shows
#: none), with the permission the browser holds.
RECORD_NOTIFICATIONS = """
(function () {
  var Shown = window.Notification;
  window.notificationsMade = [];
  function Recorded(title, options) {
    window.notificationsMade.push({title: title, body: options.body, tag: options.tag});
  }
  Object.defineProperty(Recorded, "permission", {
    get: function () { return Shown.permission; }
  });
  Recorded.requestPermission = Shown.requestPermission.bind(Shown);
  window.Notification = Recorded;
})();
"""


def test_a_new_request_is_told_on_the_desktop_and_in_the_title(
    embedded_app,  # noqa: F811
    browser,
):
    """With desktop notifications allowed, a request that arrives while the inbox
    is open raises the count in the tab's title and makes one notification, its
    tool and member, tagged with its id; the request waiting when the page
    loaded makes none."""
    from playwright.sync_api import expect

    base, seeded, _ = embedded_app
    lines = seeded_lines(seeded)
    ask_for_a_freeze(base, lines, "socio-1001", "Congela mi cuota del 1 al 10 de mayo")
    page = staff_inbox(browser, base, lines)
    page.context.grant_permissions(["notifications"], origin=base)
    page.add_init_script(RECORD_NOTIFICATIONS)
    page.reload()
    expect(page).to_have_title("(1) Solicitudes pendientes de aprobación · Gymnasia")
    expect(page.locator("#desktop-notifications")).to_be_hidden()  # allowed

    ask_for_a_freeze(base, lines, "socio-1003", "Freeze my membership from 1 to 10 May")

    expect(page).to_have_title(
        "(2) Solicitudes pendientes de aprobación · Gymnasia", timeout=15_000
    )
    emma = page.locator("tr[data-status=pending]", has_text="Emma Clarke")
    page.wait_for_function("window.notificationsMade.length > 0")
    page.wait_for_timeout(6_000)  # past another refresh: still one
    assert page.evaluate("window.notificationsMade") == [
        {
            "title": "Congelar la cuota",
            "body": "Emma Clarke",
            "tag": emma.get_attribute("data-request"),
        }
    ]
    page.screenshot(path=str(ARTIFACTS / "inbox-new-request.png"), full_page=True)
    page.close()


def test_the_inbox_asks_for_desktop_notifications_and_says_when_refused(
    embedded_app,  # noqa: F811
    browser,
):
    """Before the browser is asked, the inbox offers to turn notifications on;
    once refused, it says so in words instead of offering again."""
    from playwright.sync_api import expect

    base, seeded, _ = embedded_app
    page = staff_inbox(browser, base, seeded_lines(seeded))
    offer = page.locator("#desktop-notifications")
    expect(offer.locator("button")).to_be_visible()
    expect(offer.locator("span")).to_be_hidden()

    offer.locator("button").click()  # headless Chromium refuses

    expect(offer.locator("span")).to_be_visible()
    expect(offer.locator("button")).to_be_hidden()
    page.close()
