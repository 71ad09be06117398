"""The member widget when the connection drops while a message is sent (headless
Chromium, as in ``test_widget``): the reply still arrives, the notice goes once it
does, and a message is never left in the box to be sent twice."""

from __future__ import annotations

import json
import re
import time

from tests.browser.chromium import needs_chromium
from tests.browser.widget_kit import (
    ask,
    open_widget,
    site,
    sse,
)

pytestmark = needs_chromium


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
