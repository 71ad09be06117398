"""A gated booking in the staff inbox of the running app, in a real browser at
1280 px: it reads the class's name and time, not its id, and its correction
offers only upcoming sessions of that class with a free place."""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
import time
from zoneinfo import ZoneInfo

import jwt

from gymnasia.demo import DEMO_TIME_ZONE
from tests.browser.chromium import ARTIFACTS, needs_chromium
from tests.browser.test_inbox import post_json, staff_inbox
from tests.test_embedded_run import (  # noqa: F401  (the running app)
    ROOT,
    embedded_app,
    embedded_env,
    seeded_lines,
)

pytestmark = needs_chromium


def bookings_behind_approval(directory) -> None:
    """The owner's choice, written into the running app's database."""
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from tools.models import AgentToolSetting\n"
            "AgentToolSetting.objects.filter(tool_name='book_class')"
            ".update(mode='gated')",
        ],
        cwd=ROOT,
        env=embedded_env(directory),
        check=True,
    )


def test_a_gated_booking_reads_its_class_and_time_in_the_inbox(
    embedded_app,  # noqa: F811
    browser,
    tmp_path,
):
    base, seeded, _ = embedded_app
    lines = seeded_lines(seeded)
    bookings_behind_approval(tmp_path)
    agent = lines["agent"]
    token = jwt.encode(
        {"sub": "socio-1002", "aud": agent, "exp": int(time.time()) + 600},
        lines["identity secret"],
        algorithm="HS256",
    )
    started = post_json(
        f"{base}/api/v1/conversations", {"agent": agent, "identity_token": token}
    )
    url = f"{base}/api/v1/conversations/{started['conversation']}/messages"
    # A weekday after today in the gym's time zone: the demo has no classes on
    # Sundays, so «mañana» on a Saturday would find none.
    day = datetime.datetime.now(ZoneInfo(DEMO_TIME_ZONE)).date()
    day += datetime.timedelta(days=1)
    while day.weekday() > 3:
        day += datetime.timedelta(days=1)
    post_json(url, {"text": f"¿Qué clases hay el {day}?"}, started["token"])
    reply = post_json(url, {"text": "Reserva la primera"}, started["token"])
    told = reply["messages"][-1]["text"]
    named = re.search(
        r"La reserva de (.+) el \w+ \d+ de \w+(?: de \d{4})?, (\d{2}:\d{2}) queda "
        "pendiente "
        "de que el equipo la apruebe",
        told,
    )
    assert named, told
    class_name, hour = named.groups()

    page = staff_inbox(browser, base, lines)
    page.set_viewport_size({"width": 1280, "height": 900})
    row = page.locator("tr[data-status=pending]")
    row.wait_for(timeout=20_000)
    text = row.inner_text()
    assert f"Reservar {class_name} el " in text  # a sentence, not a form
    assert hour in text
    assert "Clase: 1" not in text  # never the bare id
    row.locator("details summary").click()
    options = row.locator("select[name=session_id] option").all_inner_texts()
    assert options and all(o.startswith(f"{class_name}, ") for o in options)
    selected = row.locator("select[name=session_id] option:checked").inner_text()
    assert hour in selected
    page.screenshot(path=str(ARTIFACTS / "inbox-gated-booking.png"), full_page=True)
    page.close()
