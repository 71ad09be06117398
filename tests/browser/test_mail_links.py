"""Staff decide from their mail: the app as ``make run`` starts it, with its
mails going to an SMTP server on loopback; the test reads the mails, follows
their links in Chromium, approves one request and rejects another, and reads
what the member was told."""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest

from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.test_inbox import ask_for_a_freeze
from tests.smtp_server import smtp_server
from tests.test_embedded_run import embedded_app_running, seeded_lines

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def mailing_app(tmp_path_factory):
    """The embedded app, its mails sent to a server of the test's own."""
    with smtp_server() as (port, inbox):
        directory = tmp_path_factory.mktemp("mailing-app")
        env = {"EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": str(port)}
        with embedded_app_running(directory, extra_env=env) as (base, seeded, log):
            yield base, seeded_lines(seeded), inbox, log


def messages(base: str, conversation: str, token: str) -> list[dict]:
    request = urllib.request.Request(
        f"{base}/api/v1/conversations/{conversation}/messages",
        headers={"Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["messages"]


def told_after(base: str, conversation: str, token: str, seen: int) -> str:
    """What the member was told after the first ``seen`` messages, once it is
    there."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        later = messages(base, conversation, token)[seen:]
        if later:
            return " ".join(message["text"] for message in later)
        time.sleep(0.3)
    raise AssertionError("the member was not told anything")


def links(mail, address_of: str) -> dict[str, str]:
    """The mail's decision links and inbox link, by their words in the text."""
    text = mail.part("text/plain")
    found = dict(re.findall(r"(Aprobar|Rechazar|Abrir en la bandeja): (\S+)", text))
    assert all(url.startswith(address_of) for url in found.values()), found
    return found


def test_staff_approve_and_reject_from_their_mail(mailing_app, browser):
    base, lines, inbox, log = mailing_app
    site = base  # the address ``serve`` printed, where staff signed in
    conversation, token = ask_for_a_freeze(
        base, lines, "socio-1001", "Congela mi cuota del 1 al 10 de mayo"
    )

    mails = inbox.wait(2)  # the demo's owner and staff member
    assert sorted(address for mail in mails for address in mail.to) == [
        "demo-owner@example.com",
        "demo-staff@example.com",
    ]
    (to_staff,) = inbox.to("demo-staff@example.com")
    assert "Congelar la cuota" in to_staff.subject
    assert "Congelar la cuota del 1 al 10 de mayo" in to_staff.part("text/plain")
    assert "Congelar la cuota" in to_staff.part("text/html")
    approve = links(to_staff, site)["Aprobar"]
    seen = len(messages(base, conversation, token))

    page = browser.new_page(locale="es-ES")
    page.goto(approve)  # what a mail scanner does too: nothing is decided
    signed = approve.rsplit("/", 1)[1]
    assert "/inbox/link/page/" in page.url and signed not in page.url
    page.screenshot(path=str(ARTIFACTS / "mail-link-confirm.png"), full_page=True)
    assert page.locator("h1").inner_text() == "Aprobar la solicitud"
    page.get_by_role("button", name="Aprobar").click()
    page.wait_for_selector("text=Has aprobado")
    outcome = told_after(base, conversation, token, seen)
    assert "congel" in outcome.lower() and "no he podido" not in outcome.lower()

    page.goto(approve)  # the same link again
    assert "ya se usó" in page.locator("[role=alert]").inner_text()
    page.close()

    second, second_token = ask_for_a_freeze(
        base, lines, "socio-1002", "Congela mi cuota del 1 al 10 de junio"
    )
    inbox.wait(4, seconds=90)  # the next mail of each waits for its minute
    staff_mails = inbox.to("demo-staff@example.com")
    reject = links(staff_mails[-1], site)["Rechazar"]
    page = browser.new_page(locale="es-ES")
    seen = len(messages(base, second, second_token))
    page.goto(reject)
    page.fill("#reason", "Ese mes hay obras en el gimnasio.")
    page.get_by_role("button", name="Rechazar").click()
    page.wait_for_selector("text=Has rechazado")
    page.screenshot(path=str(ARTIFACTS / "mail-link-rejected.png"), full_page=True)
    page.close()
    outcome = told_after(base, second, second_token, seen)
    assert "no ha aprobado" in outcome and "Ese mes hay obras" in outcome
    logged = log.read_text()
    assert "/inbox/link/" in logged  # the server logged the links' requests
    for link in (approve, reject):
        assert link.rsplit("/", 1)[1] not in logged  # but none of their tokens
