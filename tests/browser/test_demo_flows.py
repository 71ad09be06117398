"""The demo flows the README promises, in the widget of the demo gym's site,
answered by the offline demo model (Chromium driven by Playwright)."""

from __future__ import annotations

import datetime
import re

from tests.agents.offline_kit import at
from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.test_inbox import staff_inbox
from tests.browser.widget_kit import ask, open_widget, site
from tests.test_embedded_run import (  # noqa: F401  (an app of its own)
    embedded_app,
    seeded_lines,
)

pytestmark = needs_chromium


def _weekday_ahead(days: int) -> datetime.date:
    day = datetime.date.today() + datetime.timedelta(days=days)
    while day.weekday() > 4:
        day += datetime.timedelta(days=1)
    return day


def _said(frame, text: str) -> str:
    return ask(frame, text).locator(".text").inner_text()


def test_a_member_walks_the_demo_flows(embedded_app, browser):  # noqa: F811
    """The rice's figures; a food logged after «¿cuál?» and «otros 100 g»; a
    class listed and booked, then asked again; an honest refusal; a freeze
    asked from a length, confirmed, approved by staff in the inbox. On an app
    of its own: the bookings and freezes it makes are no other test's."""
    from playwright.sync_api import expect

    base, seeded, _ = embedded_app
    lines = seeded_lines(seeded)
    page = browser.new_context(locale="es-ES").new_page()
    page.goto(site(base, "?member=socio-1002"))
    frame = open_widget(page)
    day = _weekday_ahead(3).isoformat()

    assert "Arroz blanco (cocido): 28 g" in _said(
        frame, "¿Cuántos carbohidratos tiene el arroz?"
    )
    assert _said(frame, "Apúntame 100 g de arroz en la comida") == (
        "¿Cuál: Arroz blanco (cocido) o Arroz integral (cocido)?"
    )
    assert _said(frame, "el blanco").startswith("Anotado: 100 g de Arroz blanco")
    assert _said(frame, "otros 100 g").startswith("Anotado: 100 g de Arroz blanco")
    listed = _said(frame, f"¿Qué clases hay el {day}?")
    assert f"Spinning {at(day, '07:30')} " in listed
    assert not re.search(r"\d{4}-\d{2}-\d{2}", listed)
    assert _said(frame, "Reserva la primera") == (
        f"Reserva confirmada: Spinning el {at(day, '07:30')} en Sala ciclo."
    )
    assert _said(frame, "Reserva la primera").startswith(
        "Eso ya estaba hecho; no lo he repetido."
    )
    refused = ask(frame, "Apúntame 0 g de arroz blanco en la comida")
    assert refused.get_attribute("data-state") == "not_done"
    # The refusal is said once: R10's sentence, then why; no badge saying it again.
    assert refused.locator(".text").inner_text() == (
        "No he podido hacer el cambio que pediste.\n\n"
        "La cantidad tiene que ser mayor que 0 g."
    )
    assert "No hecho" not in refused.inner_text()
    assert "No se ha podido" not in refused.inner_text()
    assert _said(frame, "Quiero congelar mi membresía dos semanas").startswith(
        "¿Desde qué día quieres congelarla?"
    )
    assert _said(frame, "desde el lunes que viene").startswith(
        "¿Pido que congelen tu cuota del "
    )
    waits = ask(frame, "Sí, adelante")
    assert waits.get_attribute("data-state") == "waits"
    page.screenshot(path=str(ARTIFACTS / "demo-flows-freeze-waiting.png"))

    staff = staff_inbox(browser, base, lines)
    row = staff.locator("tr[data-status=pending]", has_text="Sí, adelante")
    row.locator("form[action$='/approve'] button").click()
    confirmed = frame.locator("#log li[data-role=assistant]", has_text="congelada")
    expect(confirmed).to_have_count(1, timeout=60_000)
    assert "Cuota congelada del " in confirmed.inner_text()
    page.context.close()
    staff.context.close()


def test_a_visitor_asking_for_member_data_is_asked_to_sign_in(app, browser):
    base, _, _ = app
    page = browser.new_context(locale="es-ES").new_page()
    page.goto(site(base))
    frame = open_widget(page)

    assert _said(frame, "¿Qué clases tengo?") == (
        "Para eso necesito saber quién eres: entra con tu cuenta en la web del "
        "gimnasio y vuelve a preguntármelo."
    )
    page.context.close()
