"""What staff and owners see in Chromium, at a desktop's width and a phone's: the
inbox and the admin's pages of calls, decisions and conversations name tools by
their titles and say statuses in words. DESIGN's status codes are looked for in
all the text shown, code included (the result the model received is a call's
download, not its page); other codes and tools' names outside what is set apart
as code (a tool's name after its title), as a reader takes it for the machine's
record."""

from __future__ import annotations

import re

import pytest

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.test_inbox import ask_for_a_freeze, signed_in
from tests.test_plain_words import raw_words, status_codes_in

pytestmark = needs_chromium

#: The text a reader sees, without what is set apart as code.
READ_TEXT = """() => {
  const copy = document.body.cloneNode(true);
  copy.querySelectorAll('code, pre, script, style, template').forEach(n => n.remove());
  document.body.appendChild(copy);
  copy.style.position = 'absolute';
  const text = copy.innerText;
  copy.remove();
  return text;
}"""


def _read(page, name: str, width: int) -> str:
    page.screenshot(path=str(ARTIFACTS / f"words-{name}-{width}.png"), full_page=True)
    codes = status_codes_in(page.evaluate("() => document.body.innerText"), "es")
    assert codes == [], (name, codes)
    return page.evaluate(READ_TEXT)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_inbox_and_the_admin_read_in_words(app, browser, width):
    from playwright.sync_api import expect

    base, lines, _ = app
    ask_for_a_freeze(base, lines, "socio-1001", "Congela mi cuota del 1 al 10 de junio")
    page = signed_in(browser, base, lines, "owner", "/inbox/", width)
    expect(page.locator("tr[data-status=pending]").first).to_be_visible()
    page.locator("button.reject").first.click()
    expect(page.locator("tr[data-status=rejected]").first).to_be_visible()
    found = {"inbox": _read(page, "inbox", width)}

    page.goto(f"{base}/admin/tools/toolcalllog/")
    found["calls"] = _read(page, "calls", width)
    page.goto(f"{base}/admin/tools/toolcalllog/?tool_name=freeze_membership")
    page.locator("#result_list tbody a").first.click()
    expect(page.locator("#content h1")).to_be_visible()
    found["call"] = _read(page, "call", width)
    page.goto(f"{base}/admin/approvals/decision/")
    found["decisions"] = _read(page, "decisions", width)
    page.locator("#result_list tbody a").first.click()
    found["decision"] = _read(page, "decision", width)
    page.goto(f"{base}/admin/agents/conversation/")
    found["conversations"] = _read(page, "conversations", width)
    page.locator("#result_list tbody a").first.click()
    expect(page.locator(".timeline-message").first).to_be_visible()
    found["conversation"] = _read(page, "conversation", width)
    timeline = page.locator("fieldset.timeline").inner_text()
    # each call one line in words: no arguments' JSON, no id, no empty heading
    assert "Congelar la cuota del 1 al 10 de junio" in timeline, timeline
    assert not re.search(r"[{}]", timeline), timeline
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-", timeline), timeline
    assert "Resultados de herramientas" not in timeline
    page.close()

    raw = {name: raw_words(text) for name, text in found.items()}
    assert {name: words for name, words in raw.items() if words} == {}
    assert (
        "Congelar la cuota" in found["call"] and "Congelar la cuota" in found["inbox"]
    )


@pytest.mark.parametrize("width", [1280, 390])
def test_an_english_reader_sees_the_conversation_as_what_happened(app, browser, width):
    """The conversation's verification log read in English, on a desktop and a
    phone: the member's request one line in words, with no arguments' JSON, no
    id, no empty heading and no status code."""
    from playwright.sync_api import expect

    base, lines, _ = app
    ask_for_a_freeze(
        base, lines, "socio-1003", "Please freeze my membership from 1 to 10 July"
    )
    page = signed_in(
        browser, base, lines, "owner", "/admin/agents/conversation/", width, "en-US"
    )
    page.locator("#result_list tbody a").first.click()
    expect(page.locator(".timeline-message").first).to_be_visible()
    page.screenshot(
        path=str(ARTIFACTS / f"words-conversation-en-{width}.png"), full_page=True
    )
    timeline = page.locator("fieldset.timeline").inner_text()

    assert "Freeze the membership from 1 to 10 July" in timeline, timeline
    assert not re.search(r"[{}]", timeline), timeline
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-", timeline), timeline
    assert "Tool results" not in timeline
    assert status_codes_in(page.evaluate("() => document.body.innerText"), "en") == []
    page.close()
