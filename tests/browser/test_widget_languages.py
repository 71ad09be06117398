"""The member widget's language in a real browser: the member's own once her
conversation starts, the page's for a visitor, and a failure said in it."""

from __future__ import annotations

import pytest

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.widget_kit import (
    ask,
    open_widget,
    site,
    sse,
    widget,
)

pytestmark = needs_chromium


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


def test_a_visitor_on_an_english_page_reads_english(app, browser):
    """The demo gym's page, made an English page (``<html lang="en">``), embeds
    the widget of the Spanish demo gym: the widget sends the page's language, and
    a visitor reads the panel and the answers in English, whatever the browser's
    own language."""
    from playwright.sync_api import expect

    base, _, _ = app
    page = browser.new_page(locale="es-ES")
    page.add_init_script(
        "document.addEventListener('DOMContentLoaded', function () {"
        " document.documentElement.lang = 'en'; });"
    )
    page.goto(site(base))
    frame = open_widget(page)
    expect(frame.locator("#send")).to_have_text("Send")

    reply = ask(frame, "How many carbs has the rice?")

    assert "carbohydrates" in reply.inner_text()
    assert "carbohidratos" not in reply.inner_text()
    page.close()
