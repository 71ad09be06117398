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

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.test_inbox import staff_inbox
from tests.browser.widget_kit import (
    ask,
    history,
    kept_session,
    open_widget,
    site,
    sse,
    widget,
)
from tests.test_embedded_run import (
    ROOT,
    embedded_env,
)

pytestmark = needs_chromium


WAITS = (
    "He enviado tu solicitud al equipo del gimnasio; te avisaré aquí cuando la revisen."
)


HOSTILE_FOOD = (
    'Tarta <img src=x onerror="window.injected=1"><script>window.injected=2</script>'
)


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
    expect(frame.locator("#log-region")).to_have_attribute("aria-live", "polite")

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
    # The state is R10's sentence itself, marked; no badge repeats it.
    expect(reply.locator(".state")).to_have_text(WAITS)
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
    assert "Cuota congelada del " in confirmed.inner_text()
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
    waiting = ask(frame, "Congela mi cuota en octubre")
    assert waiting.get_attribute("data-state") == "waits"
    staff = staff_inbox(browser, base, lines)
    row = staff.locator(
        "tr[data-status=pending]", has_text="Congela mi cuota en octubre"
    )
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
    assert "Cuota congelada del 1 al 31 de octubre" in outcome.inner_text()
    member.screenshot(path=str(ARTIFACTS / "widget-outcome-during-turn.png"))
    context.close()
    staff.close()


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


def test_widget_reads_every_page_of_what_arrived_while_it_waited(app, browser):
    """A look at the conversation answers one page (at most 50 messages) and says
    whether more follow: the widget asks again from the last one it read until
    none do, so a burst of staff notes is shown whole, in order."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_page(locale="es-ES")
    page.goto(site(base))
    frame = open_widget(page)
    ask(frame, "Hola")
    notes = [
        {
            "id": str(10**12 + n),
            "role": "notice",
            "text": f"Nota del equipo {n}",
            "created_at": "2026-12-03T10:00:00+00:00",
        }
        for n in range(60)
    ]
    asked_after = []
    ids = [m["id"] for m in notes]  # ids are opaque: only their order is known

    def later_messages(route):
        after = route.request.url.split("after=")[1].split("&")[0]
        asked_after.append((after, time.monotonic()))
        newer = notes[ids.index(after) + 1 :] if after in ids else notes
        route.fulfill(
            status=200,
            content_type="application/json",
            headers={"Access-Control-Allow-Origin": "*"},
            body=json.dumps({"messages": newer[:50], "more": len(newer) > 50}),
        )

    page.route(re.compile(r".*/messages\?after=.*"), later_messages)

    shown = frame.locator("#log li[data-role=notice]", has_text="Nota del equipo")
    expect(shown).to_have_count(60, timeout=20_000)
    assert shown.nth(0).inner_text().endswith("Nota del equipo 0")
    assert shown.nth(59).inner_text().endswith("Nota del equipo 59")
    # The second page is asked for at once, not at the next look 3 s later.
    first = next(at for after, at in asked_after if after not in ids)
    second = next(at for after, at in asked_after if after == str(10**12 + 49))
    assert second - first < 1.5


def test_widget_shows_earlier_messages_page_by_page(app, browser):
    """After a reload the panel shows the conversation's newest page; older
    messages come a page at a time, above, in order, on the member's request."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_page(locale="es-ES")
    page.goto(site(base))
    frame = open_widget(page)
    ask(frame, "Hola")
    older = [
        {
            "id": str(n),
            "role": "member" if n % 2 else "assistant",
            "text": f"Mensaje antiguo {n}",
            "created_at": "2026-12-01T10:00:00+00:00",
        }
        for n in range(1, 61)
    ]

    def history(route):
        url = route.request.url
        if "after=" in url:
            return route.continue_()
        if "before=" in url:
            before = int(url.split("before=")[1].split("&")[0])
            page_of = [m for m in older if int(m["id"]) < before][-50:]
            more = bool(page_of) and int(page_of[0]["id"]) > 1
        else:
            page_of, more = older[-50:], True
        route.fulfill(
            status=200,
            content_type="application/json",
            headers={"Access-Control-Allow-Origin": "*"},
            body=json.dumps({"messages": page_of, "more": more}),
        )

    page.route(re.compile(r".*/conversations/[^/]+/messages(\?.*)?$"), history)
    page.reload()
    frame = widget(page)  # open still: the page keeps the panel as it was
    shown = frame.locator("#log li", has_text="Mensaje antiguo")
    expect(shown).to_have_count(50, timeout=20_000)
    earlier = frame.locator("#older-messages")
    expect(earlier).to_have_text("Mostrar mensajes anteriores")

    earlier.click()

    expect(shown).to_have_count(60, timeout=10_000)
    assert shown.nth(0).inner_text().endswith("Mensaje antiguo 1")
    assert shown.nth(59).inner_text().endswith("Mensaje antiguo 60")
    expect(earlier).to_be_hidden()
