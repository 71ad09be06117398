"""The periods members name, as a freeze is asked for: two days of a month ("del 1
al 10 de agosto"), a month, or a length from one day ("dos semanas desde el 5 de
enero")."""

from __future__ import annotations

import calendar
import datetime
import re

from agents.providers.offline.words import ISO_DATE, day_named, has

MONTHS = {
    name: number
    for names in (
        "enero febrero marzo abril mayo junio julio agosto septiembre octubre "
        "noviembre diciembre",
        "january february march april may june july august september october "
        "november december",
    )
    for number, name in enumerate(names.split(), start=1)
}
#: Months written short ("feb 2", "Sept. 3"); not "mar" (the sea), "ago" (two
#: weeks ago) or "may", which are words of their own.
MONTHS_SHORT = re.compile(
    r"\b(ene|jan|feb|abr|apr|jun|jul|aug|sept?|oct|nov|dic|dec)\b\.?"
)
#: The numbers of a month's days ("del 2 al 16", "the 2nd to the 16th").
DAYS_OF_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\b")


def period_named(
    said: str, today: datetime.date, month: int | None = None
) -> tuple[datetime.date, datetime.date] | None:
    """The period a message names: two ISO dates; two days of a month ("del 1 al 10
    de agosto", "August 3 to 9"), or of ``month`` when it names none ("del 3 al
    17", of the month said before); or a month, its days from tomorrow on when it
    is the current month. A month is the next one of that name to come."""
    dates = ISO_DATE.findall(said)
    if len(dates) >= 2:
        try:
            return datetime.date.fromisoformat(dates[0]), datetime.date.fromisoformat(
                dates[1]
            )
        except ValueError:
            return None
    named = _month_named(said)
    month = named or month
    if month is not None:
        year = today.year + (1 if month < today.month else 0)
        days = [int(day) for day in DAYS_OF_MONTH.findall(said)]
        if len(days) >= 2:
            return _days_of(year, month, days[0], days[1], today)
        if named is None:
            return None  # the month said before, and no days of it now
        start = datetime.date(year, month, 1)
        following = datetime.date(year + month // 12, month % 12 + 1, 1)
        if start <= today:
            start = today + datetime.timedelta(days=1)
        return start, following - datetime.timedelta(days=1)
    return None


#: How long something lasts, as said: "dos semanas", "10 days", "una quincena".
LENGTH = re.compile(
    r"\b(\d{1,3}|una?|one|a|dos|two|tres|three|cuatro|four)\s+"
    r"(semanas?|weeks?|dias|days?)\b"
    r"|\b(?:una |a )?(quincena|fortnight)\b"
)
NUMBER_WORDS = {"un": 1, "una": 1, "one": 1, "a": 1, "dos": 2, "two": 2}
NUMBER_WORDS |= {"tres": 3, "three": 3, "cuatro": 4, "four": 4}


def length_named(said: str) -> int | None:
    """How many days a (folded) message says something lasts ("dos semanas": 14;
    a quincena is 15 days, a fortnight 14)."""
    found = LENGTH.search(said)
    if found is None:
        return None
    if found.group(3):
        return 15 if found.group(3) == "quincena" else 14
    count = found.group(1)
    number = int(count) if count.isdigit() else NUMBER_WORDS[count]
    return number * (7 if found.group(2).startswith(("semana", "week")) else 1)


def period_of_a_length(
    said: str, today: datetime.date
) -> tuple[datetime.date, datetime.date] | None:
    """The days a (folded) message names by a length and one day: the length
    from that day ("dos semanas desde el 5 de enero": the 5th to the 18th), or
    up to it ("10 days until March 20"); None without both."""
    length = length_named(said)
    if not length:
        return None
    rest = LENGTH.sub(" ", said)
    month = _month_named(rest)
    days = [int(day) for day in DAYS_OF_MONTH.findall(ISO_DATE.sub(" ", rest))]
    day: datetime.date | None
    if month is not None and len(days) == 1 and len(ISO_DATE.findall(rest)) == 0:
        year = today.year + (1 if month < today.month else 0)
        found = _days_of(year, month, days[0], days[0], today)
        day = found[0] if found else None
    elif month is None and not days:
        day = day_named(rest, today)  # an ISO date, "mañana", "el lunes"
    else:
        day = None
    if day is None:
        return None
    span = datetime.timedelta(days=length - 1)
    if has(rest, "hasta", "until", "till"):
        return day - span, day
    return day, day + span


#: The month after this one, said so.
NEXT_MONTH = re.compile(r"\b(?:next month|mes que viene|proximo mes|mes proximo)\b")


def month_of(said: str, today: datetime.date) -> int | None:
    """The month a (folded) message speaks of: named ("en enero", "feb"), or
    "next month"."""
    month = _month_named(said)
    if month is None and NEXT_MONTH.search(said):
        month = today.month % 12 + 1
    return month


def days_without_month(said: str) -> bool:
    """Whether a (folded) message gives two days of a month without naming it
    ("del 3 al 17", "from the 3rd to the 17th")."""
    return (
        _month_named(said) is None
        and not ISO_DATE.search(said)
        and len(DAYS_OF_MONTH.findall(said)) >= 2
    )


def _month_named(said: str) -> int | None:
    """The month a (folded) message names, in full or written short."""
    named = next((month for name, month in MONTHS.items() if has(said, name)), None)
    if named is not None:
        return named
    short = MONTHS_SHORT.search(said)
    if short is None:
        return None
    return next(m for name, m in MONTHS.items() if name.startswith(short.group(1)))


def _days_of(
    year: int, month: int, first: int, last: int, today: datetime.date
) -> tuple[datetime.date, datetime.date] | None:
    """Days ``first`` to ``last`` of a month, a year later when they are past; None
    when the month has no such days."""
    if not 1 <= first <= last <= calendar.monthrange(year, month)[1]:
        return None
    if datetime.date(year, month, first) <= today:
        year += 1
        if last > calendar.monthrange(year, month)[1]:
            return None
    return datetime.date(year, month, first), datetime.date(year, month, last)
