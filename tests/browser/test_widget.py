"""The member widget in a real browser (headless Chromium driven by Playwright)
against the app as ``make run`` starts it: the demo gym's site at ``localhost``
embeds the widget served from ``127.0.0.1``, two origins as in a real gym."""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.browser.chromium import ARTIFACTS, chromium_launch, needs_chromium
from tests.browser.test_inbox import staff_inbox
from tests.test_embedded_run import (
    ROOT,
    embedded_app_running,
    embedded_env,
    seeded_lines,
)

pytestmark = needs_chromium

WAITS = (
    "He enviado tu solicitud al equipo del gimnasio; te avisaré aquí cuando la revisen."
)
HOSTILE_FOOD = (
    'Tarta <img src=x onerror="window.injected=1"><script>window.injected=2</script>'
)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    directory = tmp_path_factory.mktemp("widget-app")
    with embedded_app_running(directory) as (base, seeded, _):
        yield base, seeded_lines(seeded), directory


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = chromium_launch(playwright)
        yield chromium
        chromium.close()


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


def test_widget_answers_from_the_catalog_and_keeps_the_history_across_a_reload(
    app, browser
):
    """An anonymous visitor asks about rice and reads the catalog's figures; the
    conversation is still there after the gym's page reloads."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_page(locale="es-ES")
    page.goto(site(base))
    frame = open_widget(page)
    expect(frame.locator("#offline-note")).to_be_visible()
    expect(frame.locator("#log")).to_have_attribute("aria-live", "polite")

    reply = ask(frame, "¿Cuántos carbohidratos tiene el arroz?")

    text = reply.inner_text()
    assert "Arroz blanco (cocido)" in text and "28 g" in text
    assert "Arroz integral (cocido)" in text
    assert reply.get_attribute("data-state") is None
    page.screenshot(path=str(ARTIFACTS / "widget-rice.png"))

    page.reload()
    frame = widget(page)
    expect(frame.locator("#panel")).to_be_visible()
    expect(frame.locator("#log li[data-role=member] .text")).to_have_text(
        ["¿Cuántos carbohidratos tiene el arroz?"]
    )
    assert "Arroz blanco (cocido)" in frame.locator("#log").inner_text()
    page.close()


def next_weekday(days_ahead: int = 2) -> datetime.date:
    day = datetime.date.today() + datetime.timedelta(days=days_ahead)
    while day.weekday() > 4:  # spinning runs Monday to Friday
        day += datetime.timedelta(days=1)
    return day


def test_widget_member_sees_a_waiting_request_approved_and_a_booking_confirmed(
    app, browser
):
    """A signed-in member asks to freeze (approval-gated): the widget shows it
    waiting; staff approve in another browser; the confirmation appears in the
    member's open widget by itself. Booking a class (automatic) is confirmed."""
    from playwright.sync_api import expect

    base, lines, _ = app
    member = browser.new_context(locale="es-ES").new_page()
    member.goto(site(base, "?member=socio-1001"))
    frame = open_widget(member)

    reply = ask(frame, "Congela mi cuota en marzo")

    assert reply.get_attribute("data-state") == "waits"
    assert reply.locator(".text").inner_text().startswith(WAITS)
    expect(reply.locator(".state")).to_be_visible()
    member.screenshot(path=str(ARTIFACTS / "widget-freeze-waiting.png"))

    staff = browser.new_context(locale="es-ES").new_page()
    username, password = lines["staff"].split(" ")
    staff.goto(f"{base}/admin/login/?next=/inbox/")
    staff.fill("#id_username", username)
    staff.fill("#id_password", password)
    staff.click("input[type=submit]")
    staff.wait_for_url(f"{base}/inbox/")
    row = staff.locator("tr[data-status=pending]", has_text="Congela mi cuota en marzo")
    row.wait_for(timeout=20_000)
    row.locator("form[action$='/approve'] button").click()
    staff.locator("tr[data-status=approved]").wait_for(timeout=10_000)

    confirmed = frame.locator("#log li[data-role=assistant]", has_text="congelada")
    expect(confirmed).to_have_count(1, timeout=60_000)
    assert confirmed.get_attribute("data-state") is None
    assert "Cuota congelada del 2" in confirmed.inner_text()
    member.screenshot(path=str(ARTIFACTS / "widget-freeze-approved.png"))

    day = next_weekday()
    booked = ask(frame, f"Resérvame spinning el {day.isoformat()} a las 19:00")

    assert "Reserva confirmada: Spinning" in booked.inner_text()
    assert booked.get_attribute("data-state") is None
    member.screenshot(path=str(ARTIFACTS / "widget-booking.png"))
    member.context.close()
    staff.context.close()


def test_widget_shows_html_from_the_tools_as_text(app, browser):
    """A food whose name holds HTML and a script is shown as text: no element is
    created and nothing runs."""
    base, _, directory = app
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from decimal import Decimal as D\n"
            "from gymnasia.gyms.models import Business\n"
            "from gymnasia.nutrition.services import food_upsert\n"
            "food_upsert(business=Business.objects.get(slug='gymnasia-demo'), "
            f"name={HOSTILE_FOOD!r}, aliases='tarta casera', kcal_per_100g=D(300), "
            "carbohydrates_per_100g=D(40), protein_per_100g=D(5), fat_per_100g=D(12))",
        ],
        cwd=ROOT,
        env=embedded_env(directory),
        check=True,
    )
    page = browser.new_page(locale="es-ES")
    page.goto(site(base))
    frame = open_widget(page)

    reply = ask(frame, "¿Cuántos carbohidratos tiene la tarta casera?")

    assert HOSTILE_FOOD in reply.inner_text()
    assert frame.locator("#log img, #log script").count() == 0
    assert frame.locator("body").evaluate("() => window.injected") is None
    assert page.evaluate("() => window.injected") is None
    page.screenshot(path=str(ARTIFACTS / "widget-escaped.png"))
    page.close()


def test_widget_says_clearly_when_the_identity_token_is_refused(app, browser):
    """An expired sign-in is refused, never downgraded to an anonymous visitor: the
    widget says so and sends nothing."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_page(locale="es-ES")
    page.goto(site(base, "?member=socio-1001&expired=1"))
    frame = widget(page)
    frame.locator("#launcher").click()

    expect(frame.locator("#alert")).to_be_visible()
    assert (
        "No hemos podido confirmar quién eres" in frame.locator("#alert").inner_text()
    )
    expect(frame.locator("#text")).to_be_disabled()
    assert frame.locator("#log li").count() == 0
    page.screenshot(path=str(ARTIFACTS / "widget-identity-refused.png"))
    page.close()


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


def sse(*events: tuple[str, dict]) -> str:
    return "".join(
        f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
        for name, data in events
    )


def test_widget_follows_the_streaming_protocol_and_shows_each_state(app, browser):
    """Against a turn answered with the documented events: text streamed before a
    ``discard`` is not part of the reply; replies that wait, were not done or could
    not be confirmed each look different from a done one; Markdown is rendered and
    HTML is not. (The server's side of the protocol is tested in tests/agents.)"""
    base, _, _ = app
    not_done = "No he podido hacer el cambio que pediste."
    not_confirmed = (
        "No he podido confirmar que el cambio se haya guardado; una persona del "
        "equipo lo revisará."
    )
    stamp = "2026-11-30T10:00:00+00:00"

    def message(id_: str, role: str, text: str) -> dict:
        return {"id": id_, "role": role, "text": text, "created_at": stamp}

    turn = sse(
        ("message", message("90001", "member", "varias cosas")),
        ("delta", {"text": "Voy a consultarlo"}),
        ("discard", {}),
        ("delta", {"text": WAITS}),
        ("message", message("90002", "assistant", WAITS + "\n\n**Listo** <b>x</b>")),
        ("message", message("90003", "assistant", not_done + "\n\nLo siento.")),
        ("message", message("90004", "assistant", not_confirmed + "\n\nUn momento.")),
        ("message", message("90005", "notice", "El equipo revisó tu solicitud.")),
        ("message", message("90006", "assistant", "- uno\n- dos")),
        ("done", {}),
    )

    def answer(route):
        if route.request.method == "POST":
            route.fulfill(
                status=200, content_type="text/event-stream; charset=utf-8", body=turn
            )
        else:
            route.fulfill(status=200, json={"messages": []})

    page = browser.new_page(locale="es-ES")
    page.route("**/api/v1/conversations/*/messages*", answer)
    page.goto(site(base))
    frame = open_widget(page)

    frame.locator("#text").fill("varias cosas")
    frame.locator("#text").press("Enter")

    from playwright.sync_api import expect

    items = frame.locator("#log > li")
    expect(items).to_have_count(6)
    assert [items.nth(i).get_attribute("data-state") for i in range(6)] == [
        None,
        "waits",
        "not_done",
        "not_confirmed",
        None,
        None,
    ]
    assert "Voy a consultarlo" not in frame.locator("#conversation").inner_text()
    expect(frame.locator("#live")).to_be_hidden()
    expect(frame.locator("#typing")).to_be_hidden()
    waits = items.nth(1)
    assert waits.locator("strong").inner_text() == "Listo"
    assert "<b>x</b>" in waits.inner_text() and waits.locator("b").count() == 0
    assert items.nth(4).get_attribute("data-role") == "notice"
    assert items.nth(5).locator("ul li").all_inner_texts() == ["uno", "dos"]
    page.screenshot(path=str(ARTIFACTS / "widget-states.png"))
    page.close()


def test_widget_never_shows_one_members_conversation_to_another(app, browser):
    """In one browser tab, the conversation kept for a signed-in member is not
    reopened for another member or for an anonymous visitor."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_context(locale="es-ES").new_page()
    page.goto(site(base, "?member=socio-1002"))
    frame = open_widget(page)
    ask(frame, "¿Cómo va mi cuota?")
    page.reload()
    expect(widget(page).locator("#log > li")).to_have_count(2)

    for other in ("?member=socio-1003", ""):
        page.goto(site(base, other))
        frame = widget(page)
        frame.locator("#launcher").click()
        frame.locator("#text").wait_for()
        page.wait_for_timeout(500)  # time for any history to load, were it kept
        assert frame.locator("#log > li").count() == 0
    page.context.close()


def test_a_page_signs_a_member_in_with_gymnasia_identify(app, browser):
    """A page that signs its member in after loading hands the token over with
    ``Gymnasia.identify``: the conversation is the member's from then on."""
    import jwt

    base, lines, _ = app
    token = jwt.encode(
        {"sub": "socio-1003", "aud": lines["agent"], "exp": int(time.time()) + 600},
        lines["identity secret"],
        algorithm="HS256",
    )
    page = browser.new_page(locale="en-GB")
    page.goto(site(base))
    frame = widget(page)
    frame.locator("#launcher").wait_for()

    page.evaluate("token => window.Gymnasia.identify(token)", token)
    frame = open_widget(page)
    reply = ask(frame, "How is my membership?")

    assert "Cuota mensual" in reply.inner_text()  # the member's own plan
    page.close()


def test_widget_speaks_the_members_language_once_the_conversation_starts(app, browser):
    """A member whose language is not the agent's (Emma, English, at the Spanish
    demo gym) reads the panel in English once her conversation starts, and again
    after a reload; a visitor on the same page then reads it in Spanish."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_context(locale="es-ES").new_page()
    page.goto(site(base, "?member=socio-1003"))
    frame = widget(page)
    expect(frame.locator("#text")).to_have_attribute(
        "placeholder", "Escribe tu mensaje", timeout=10_000
    )

    frame = open_widget(page)
    expect(frame.locator("#send")).to_have_text("Send")
    expect(frame.locator("#text")).to_have_attribute(
        "placeholder", "Write your message"
    )
    expect(frame.locator("#greeting")).to_contain_text("How can I help you?")
    expect(frame.locator("html")).to_have_attribute("lang", "en")
    reply = ask(frame, "How is my membership?")
    assert "Cuota mensual" in reply.inner_text()
    expect(frame.locator("#log li[data-role=member]")).to_contain_text("You:")

    page.reload()
    frame = widget(page)
    expect(frame.locator("#send")).to_have_text("Send")
    expect(frame.locator("#close")).to_have_attribute("aria-label", "Close the chat")

    page.goto(site(base))
    frame = open_widget(page)
    expect(frame.locator("#send")).to_have_text("Enviar")
    expect(frame.locator("html")).to_have_attribute("lang", "es")
    page.context.close()


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


def test_widget_shows_an_outcome_that_arrives_just_before_the_member_writes(
    app, browser
):
    """Staff approve a waiting freeze and the member writes again before the
    widget's next look at the conversation: the approval's outcome still appears,
    though the turn's messages, stored after it, were shown first."""
    from playwright.sync_api import expect

    base, lines, _ = app
    context = browser.new_context(locale="es-ES")
    context.clock.install()
    member = context.new_page()
    member.goto(site(base, "?member=socio-1002"))
    frame = open_widget(member)
    member.clock.pause_at(time.time() * 1000 + 1000)  # the widget polls no more
    waiting = ask(frame, "Congela mi cuota en junio")
    assert waiting.get_attribute("data-state") == "waits"
    staff = staff_inbox(browser, base, lines)
    row = staff.locator("tr[data-status=pending]", has_text="Congela mi cuota en junio")
    row.locator("form[action$='/approve'] button").click()
    session = kept_session(member, lines["agent"])
    deadline = time.monotonic() + 60
    while not any("congelada" in m["text"] for m in history(base, session)):
        assert time.monotonic() < deadline, "the approved freeze was not carried out"
        time.sleep(0.3)

    frame.locator("#text").fill("¿Qué clases tengo?")
    frame.locator("#text").press("Enter")
    expect(
        frame.locator("#log li", has_text="No tienes ninguna reserva")
    ).to_have_count(1, timeout=20_000)
    member.clock.run_for(3_100)  # the widget's next look at the conversation

    outcome = frame.locator("#log li[data-role=assistant]", has_text="congelada")
    expect(outcome).to_have_count(1, timeout=10_000)
    assert "Cuota congelada del 2" in outcome.inner_text()
    member.screenshot(path=str(ARTIFACTS / "widget-outcome-during-turn.png"))
    context.close()
    staff.close()


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


UNFINISHED = "El asistente no ha podido terminar su respuesta. Vuelve a intentarlo."
NOT_SENT = (
    "No se ha podido enviar el mensaje. Comprueba tu conexión y vuelve a intentarlo."
)


@pytest.mark.parametrize(
    ("answer", "alert"),
    [
        pytest.param(
            {
                "status": 200,
                "content_type": "text/event-stream; charset=utf-8",
                "body": sse(
                    ("delta", {"text": "Voy a mir"}),
                    ("error", {"error": "internal", "detail": "The turn failed."}),
                    ("done", {}),
                ),
            },
            UNFINISHED,
            id="error-event",
        ),
        pytest.param(
            {
                "status": 400,
                "json": {"error": "bad_request", "detail": "The body was refused."},
            },
            NOT_SENT,
            id="error-answer",
        ),
    ],
)
def test_widget_says_a_failure_in_the_members_language(app, browser, answer, alert):
    """When the turn fails, the member reads why in the panel's language, never
    the API's detail, which is English for the gym's developers."""
    from playwright.sync_api import expect

    base, _, _ = app

    def fail(route):
        if route.request.method == "POST":
            route.fulfill(**answer)
        else:
            route.fulfill(status=200, json={"messages": []})

    page = browser.new_page(locale="es-ES")
    page.route("**/api/v1/conversations/*/messages*", fail)
    page.goto(site(base))
    frame = open_widget(page)

    frame.locator("#text").fill("hola")
    frame.locator("#text").press("Enter")

    expect(frame.locator("#alert")).to_have_text(alert)
    expect(frame.locator("#live")).to_be_hidden()
    page.screenshot(path=str(ARTIFACTS / "widget-turn-failed.png"))
    page.close()


def test_widget_keeps_a_pasted_message_that_is_too_long_and_says_so(app, browser):
    """A member who pastes more than 4,000 characters is told the message is too
    long and keeps all of it to shorten; nothing is cut off or sent."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_page(locale="es-ES")
    page.goto(site(base))
    frame = open_widget(page)
    pasted = "Mi rutina: " + "sentadillas, " * 400 + "y al final estiramientos."
    frame.locator("#text").focus()
    page.keyboard.insert_text(pasted)  # as a paste arrives

    page.keyboard.press("Enter")

    expect(frame.locator("#alert")).to_have_text(
        re.compile(r"Tu mensaje es demasiado largo \(como máximo 4\s000 caracteres\)\.")
    )
    assert frame.locator("#text").input_value() == pasted
    page.wait_for_timeout(500)  # time for a message to be sent, were it sent
    assert frame.locator("#log li").count() == 0
    page.close()


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


def test_widget_clears_the_interrupted_notice_once_the_reply_arrives(app, browser):
    """After the connection drops during a turn, the member is told the reply will
    appear; when it arrives by the widget's regular look at the conversation, the
    notice goes away."""
    from playwright.sync_api import expect

    base, _, _ = app
    stamp = "2026-11-30T10:00:00+00:00"
    stored: list[dict] = []

    def drop_the_turn(route):
        if route.request.method == "POST":
            route.abort("connectionreset")
        else:
            route.fulfill(status=200, json={"messages": stored})

    page = browser.new_page(locale="es-ES")
    page.route("**/api/v1/conversations/*/messages*", drop_the_turn)
    page.goto(site(base))
    frame = open_widget(page)
    frame.locator("#text").fill("¿A qué hora abrís?")
    frame.locator("#text").press("Enter")
    expect(frame.locator("#alert")).to_have_text(
        "La conexión se ha interrumpido; la respuesta aparecerá aquí cuando esté lista."
    )

    stored += [
        {"id": "91001", "role": "member", "text": "¿A qué hora abrís?"},
        {"id": "91002", "role": "assistant", "text": "Abrimos a las 7:00."},
    ]
    for message in stored:
        message["created_at"] = stamp

    expect(frame.locator("#log li[data-role=assistant]")).to_have_text(
        "Asistente: Abrimos a las 7:00.", timeout=10_000
    )
    expect(frame.locator("#alert")).to_be_hidden()
    page.close()


INTERRUPTED = (
    "La conexión se ha interrumpido; la respuesta aparecerá aquí cuando esté lista."
)


def test_widget_empties_the_box_once_a_message_put_back_is_seen_to_have_arrived(
    app, browser
):
    """When the connection drops while a message is sent, its text is put back in
    the box, since it may not have arrived; once the conversation's history shows
    that it did, the box is emptied, so that it is not sent twice, and the notice
    still says the reply will come, until it does."""
    from playwright.sync_api import expect

    base, _, _ = app
    stamp = "2026-11-30T10:00:00+00:00"
    stored: list[dict] = []

    def lose_the_answer(route):
        if route.request.method == "POST":
            # The message reaches the server; the answer never reaches the panel.
            text = json.loads(route.request.post_data or "{}")["text"]
            stored.append(
                {"id": "93001", "role": "member", "text": text, "created_at": stamp}
            )
            route.abort("connectionreset")
        else:
            route.fulfill(status=200, json={"messages": stored})

    page = browser.new_page(locale="es-ES")
    page.route("**/api/v1/conversations/*/messages*", lose_the_answer)
    page.goto(site(base))
    frame = open_widget(page)

    frame.locator("#text").fill("¿Abrís el domingo?")
    frame.locator("#text").press("Enter")

    expect(frame.locator("#log li[data-id='93001']")).to_have_count(1)
    expect(frame.locator("#text")).to_have_value("")
    expect(frame.locator("#alert")).to_have_text(INTERRUPTED)
    reply = {"id": "93002", "role": "assistant", "text": "Sí, de 9:00 a 14:00."}
    stored.append(reply | {"created_at": stamp})
    expect(frame.locator("#log li[data-role=assistant]")).to_have_text(
        "Asistente: Sí, de 9:00 a 14:00.", timeout=10_000
    )
    expect(frame.locator("#alert")).to_be_hidden()
    expect(frame.locator("#log li[data-role=member]")).to_have_count(1)
    page.close()


def test_widget_keeps_a_message_put_back_until_it_is_seen_to_have_arrived(app, browser):
    """After a lost connection, the text put back stays in the box while the
    history does not show that message (an earlier message in the same words does
    not count); when it does show up, a text the member has changed meanwhile is
    kept."""
    from playwright.sync_api import expect

    base, _, _ = app
    stamp = "2026-11-30T10:00:00+00:00"
    asked = "¿Abrís el domingo?"
    stored: list[dict] = []
    looks: list[int] = []

    def message(id_: str, role: str, text: str) -> dict:
        return {"id": id_, "role": role, "text": text, "created_at": stamp}

    def answer_once_then_lose(route):
        if route.request.method == "GET":
            looks.append(1)
            route.fulfill(status=200, json={"messages": stored})
        elif not stored:
            stored.extend(
                [
                    message("94001", "member", asked),
                    message("94002", "assistant", "Sí, de 9:00 a 14:00."),
                ]
            )
            body = sse(*(("message", m) for m in stored), ("done", {}))
            route.fulfill(
                status=200, content_type="text/event-stream; charset=utf-8", body=body
            )
        else:  # the second message never reaches the server
            route.abort("connectionreset")

    page = browser.new_page(locale="es-ES")
    page.route("**/api/v1/conversations/*/messages*", answer_once_then_lose)
    page.goto(site(base))
    frame = open_widget(page)
    ask(frame, asked)

    frame.locator("#text").fill(asked)
    frame.locator("#text").press("Enter")

    expect(frame.locator("#alert")).to_have_text(INTERRUPTED)
    seen = len(looks)
    deadline = time.monotonic() + 10
    while len(looks) < seen + 2:  # a look right away, then the regular one
        assert time.monotonic() < deadline, "the widget did not look again"
        page.wait_for_timeout(100)
    expect(frame.locator("#text")).to_have_value(asked)
    frame.locator("#text").fill(asked + " ¿Y por la tarde?")
    stored.append(message("94003", "member", asked))  # it arrived after all
    expect(frame.locator("#log li[data-id='94003']")).to_have_count(1, timeout=10_000)
    expect(frame.locator("#text")).to_have_value(asked + " ¿Y por la tarde?")
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
    expect(frame.locator("#log")).to_have_attribute("aria-live", "polite")
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


CUT_AFTER_THE_FIRST_PIECE = """
if (location.pathname.startsWith("/widget/")) {
  // A turn's stream whose connection drops after its first piece has arrived.
  const realFetch = window.fetch;
  window.fetch = (url, options) => {
    const turn = options && options.method === "POST" && /\\/messages$/.test(url);
    return realFetch(url, options).then((response) => {
      if (!turn) return response;
      const reader = response.body.getReader();
      const body = new ReadableStream({
        pull(controller) {
          return reader.read().then((chunk) => {
            controller.enqueue(chunk.value);
            reader.cancel();
            controller.error(new TypeError("network error"));
          });
        }
      });
      return new Response(body, { status: response.status, headers: response.headers });
    });
  };
}
"""


def test_widget_puts_nothing_back_when_the_connection_drops_after_storing(app, browser):
    """When the connection drops after the turn has said the member's message is
    stored, the message stays in the log as stored and its text is not put back in
    the box: it arrived, and sending it again would send it twice."""
    from playwright.sync_api import expect

    base, _, _ = app
    stamp = "2026-11-30T10:00:00+00:00"
    mine = {"id": "95001", "role": "member", "text": "¿Abrís el domingo?"}
    stored = [mine | {"created_at": stamp}]

    def answer(route):
        if route.request.method == "POST":
            body = sse(("message", stored[0]), ("delta", {"text": "Sí, de"}))
            route.fulfill(
                status=200, content_type="text/event-stream; charset=utf-8", body=body
            )
        else:
            route.fulfill(status=200, json={"messages": stored})

    context = browser.new_context(locale="es-ES")
    context.add_init_script(CUT_AFTER_THE_FIRST_PIECE)
    page = context.new_page()
    page.route("**/api/v1/conversations/*/messages*", answer)
    page.goto(site(base))
    frame = open_widget(page)

    frame.locator("#text").fill("¿Abrís el domingo?")
    frame.locator("#text").press("Enter")

    expect(frame.locator("#alert")).to_have_text(INTERRUPTED)
    expect(frame.locator("#text")).to_have_value("")
    expect(frame.locator("#log > li")).to_have_count(1)
    expect(frame.locator("#log > li")).to_have_attribute("data-id", "95001")
    expect(frame.locator("#log > li")).not_to_have_class(re.compile("sending"))
    page.context.close()
