"""Dates, moments and stretches of days as people write them, in Spanish and in
English: the current year left out, a stretch's month and year said once, a
moment at the gym's clock."""

from __future__ import annotations

import datetime
import zoneinfo

import pytest
import time_machine
from django.utils import timezone, translation

from gymnasia.when import when_written

MADRID = zoneinfo.ZoneInfo("Europe/Madrid")
#: "Today" for these tests: Monday 7 December 2026, in Madrid.
pytestmark = pytest.mark.usefixtures("on_monday_7_december_2026")


@pytest.fixture
def on_monday_7_december_2026():
    with time_machine.travel(datetime.datetime(2026, 12, 7, 9, tzinfo=datetime.UTC)):
        yield


def _both(*args, **kwargs) -> tuple[str, str]:
    with translation.override("es"):
        spanish = when_written(*args, **kwargs)
    with translation.override("en"):
        english = when_written(*args, **kwargs)
    return spanish, english


D = datetime.date


@pytest.mark.parametrize(
    ("first", "last", "spanish", "english"),
    [
        (D(2027, 2, 3), D(2027, 2, 9), "del 3 al 9 de febrero de 2027", "from 3 to 9 February 2027"),
        (D(2027, 2, 28), D(2027, 3, 3), "del 28 de febrero al 3 de marzo de 2027", "from 28 February to 3 March 2027"),
        (D(2026, 12, 28), D(2027, 1, 3), "del 28 de diciembre de 2026 al 3 de enero de 2027", "from 28 December 2026 to 3 January 2027"),
        (D(2026, 12, 8), D(2026, 12, 20), "del 8 al 20 de diciembre", "from 8 to 20 December"),
        (D(2026, 11, 28), D(2026, 12, 3), "del 28 de noviembre al 3 de diciembre", "from 28 November to 3 December"),
        (D(2027, 2, 3), D(2027, 2, 3), "el 3 de febrero de 2027", "on 3 February 2027"),
    ],
)  # fmt: skip
def test_a_stretch_of_days_says_each_month_and_year_once(first, last, spanish, english):
    assert _both(first, last) == (spanish, english)


def test_a_day_leaves_this_year_out_and_says_another():
    assert _both(D(2026, 12, 24)) == ("24 de diciembre", "24 December")
    assert _both(D(2027, 1, 6)) == ("6 de enero de 2027", "6 January 2027")
    assert _both(D(2026, 12, 24), year=True) == (
        "24 de diciembre de 2026",
        "24 December 2026",
    )


def test_a_day_may_name_its_weekday():
    assert _both(D(2026, 12, 7), weekday=True) == (
        "lunes 7 de diciembre",
        "Monday 7 December",
    )


def test_a_moment_is_its_weekday_day_and_hour_at_the_gyms_clock():
    """06:30 UTC is 07:30 in Madrid in winter, whatever zone is active."""
    moment = datetime.datetime(2026, 12, 7, 6, 30, tzinfo=datetime.UTC)
    with timezone.override("America/New_York"):
        assert _both(moment, zone=MADRID) == (
            "lunes 7 de diciembre, 07:30",
            "Monday 7 December, 07:30",
        )
    later = datetime.datetime(2027, 3, 1, 18, 0, tzinfo=MADRID)
    assert _both(later, zone=MADRID) == (
        "lunes 1 de marzo de 2027, 18:00",
        "Monday 1 March 2027, 18:00",
    )


def test_a_moment_near_midnight_is_on_the_gyms_day():
    """23:30 UTC on the 7th is already the 8th in Madrid."""
    moment = datetime.datetime(2026, 12, 7, 23, 30, tzinfo=datetime.UTC)
    assert _both(moment, zone=MADRID) == (
        "martes 8 de diciembre, 00:30",
        "Tuesday 8 December, 00:30",
    )
