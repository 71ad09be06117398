"""Days as members say them, in Spanish and English: data for the rules, not
translation. Every date is computed from ``today``, the gym's own day."""

from __future__ import annotations

import calendar
import datetime
import re

MONTHS = {
    **{
        m: n
        for n, m in enumerate(
            "enero febrero marzo abril mayo junio julio agosto septiembre octubre "
            "noviembre diciembre".split(),
            1,
        )
    },
    **{
        m: n
        for n, m in enumerate(
            "january february march april may june july august september october "
            "november december".split(),
            1,
        )
    },
}
WEEKDAYS = {
    **{
        d: n
        for n, d in enumerate(
            "lunes martes miercoles jueves viernes sabado domingo".split()
        )
    },
    **{
        d: n
        for n, d in enumerate(
            "monday tuesday wednesday thursday friday saturday sunday".split()
        )
    },
}
NUMBERS = {
    "un": 1,
    "una": 1,
    "uno": 1,
    "one": 1,
    "a": 1,
    "dos": 2,
    "two": 2,
    "tres": 3,
    "three": 3,
    "cuatro": 4,
    "four": 4,
}
UNITS = {"dia": 1, "day": 1, "semana": 7, "week": 7, "mes": 30, "month": 30}
MONTH = "|".join(MONTHS)
WEEKDAY = "|".join(WEEKDAYS)
#: "del 1 al 10 de agosto", "del 30 de febrero al 5 de marzo", "from 1 to 10 May".
RANGE = re.compile(
    rf"\b(?:del?|from)\s+(?:el\s+|dia\s+)?(\d{{1,2}})(?:\s+(?:de\s+)?({MONTH}))?"
    rf"\s+(?:al|a|hasta el|to|until)\s+(?:el\s+)?(\d{{1,2}})\s+(?:de\s+)?({MONTH})\b"
)
ISO_RANGE = re.compile(
    r"(\d{4}-\d{2}-\d{2})\s+(?:al|a|hasta el|to|until)\s+(\d{4}-\d{2}-\d{2})"
)
ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
IN_MONTH = re.compile(
    rf"\b(?:en|in|durante|during|para|for)\s+(?:el mes de\s+)?({MONTH})\b"
)
DAY_OF_MONTH = re.compile(
    rf"\b(\d{{1,2}})\s+(?:de\s+)?({MONTH})\b|\b({MONTH})\s+(\d{{1,2}})\b"
)
LENGTH = re.compile(
    rf"\b(\d+|{'|'.join(NUMBERS)})\s+(dia|day|semana|week|mes|month)(?:e?s)?\b"
)


class NoSuchDate(ValueError):
    """A date no calendar has ("30 de febrero"), written as ``YYYY-MM-DD``."""

    def __init__(self, written: str) -> None:
        super().__init__(written)
        self.written = written


def _date(year: int, month: int, day: int) -> datetime.date:
    try:
        return datetime.date(year, month, day)
    except ValueError:
        raise NoSuchDate(f"{year}-{month:02d}-{day:02d}") from None


def _year_for(month: int, day: int, today: datetime.date) -> int:
    """The year of the next such day from today (a day past is next year's)."""
    return today.year + ((month, day) < (today.month, today.day))


def day_named(said: str, today: datetime.date) -> datetime.date | None:
    """The one day a (folded) message names: "hoy", "mañana", "el lunes (que
    viene)", "next monday", "el 3 de enero", "2027-01-03"; ``None`` when none."""
    if found := ISO.search(said):
        return _date(*(int(part) for part in found.groups()))
    if found := DAY_OF_MONTH.search(said):
        day, month = (found[1], found[2]) if found[1] else (found[4], found[3])
        number = MONTHS[month]
        return _date(_year_for(number, int(day), today), number, int(day))
    if re.search(r"\bpasado manana\b|\bday after tomorrow\b", said):
        return today + datetime.timedelta(days=2)
    if re.search(r"\b(?:manana|tomorrow)\b", said):
        return today + datetime.timedelta(days=1)
    if re.search(r"\b(?:hoy|today|tonight|esta noche)\b", said):
        return today
    if found := re.search(rf"\b({WEEKDAY})\b", said):
        ahead = (WEEKDAYS[found[1]] - today.weekday() - 1) % 7 + 1
        return today + datetime.timedelta(days=ahead)
    return None


def days_named(
    said: str, today: datetime.date
) -> tuple[datetime.date, datetime.date] | None:
    """The first and last day of a range a message names: "del 1 al 10 de
    agosto", "from 1 to 10 May", a whole month ("en agosto"), or two ISO dates.
    Raises ``NoSuchDate`` for a day no calendar has."""
    if found := ISO_RANGE.search(said):
        start, end = (datetime.date.fromisoformat(part) for part in found.groups())
        return start, end
    if found := RANGE.search(said):
        first, first_month, last, last_month = found.groups()
        end_month = MONTHS[last_month]
        start_month = MONTHS[first_month] if first_month else end_month
        year = _year_for(start_month, min(int(first), 28), today)
        start = _date(year, start_month, int(first))
        end = _date(year + (end_month < start_month), end_month, int(last))
        return start, end
    if found := IN_MONTH.search(said):
        month = MONTHS[found[1]]
        year = today.year + (month <= today.month)
        return _date(year, month, 1), _date(
            year, month, calendar.monthrange(year, month)[1]
        )
    return None


def length_named(said: str) -> int | None:
    """How many days a length says: "dos semanas" 14, "10 days" 10, "un mes" 30."""
    if found := LENGTH.search(said):
        count = found[1]
        number = int(count) if count.isdigit() else NUMBERS[count]
        return number * UNITS[found[2]]
    return None
