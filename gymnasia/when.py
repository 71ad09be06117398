"""Dates and times as people write them, in the active language: «lunes 7 de
diciembre, 07:30», «del 3 al 9 de febrero de 2027», "from 28 February to 3 March
2027". This is the one place that writes a day, a moment or a stretch of days
for people (members, staff and owners), so a chat, a notice, a mail and the
inbox say a date the same way.
"""

from __future__ import annotations

import datetime

from django.utils import timezone
from django.utils.dates import MONTHS, WEEKDAYS
from django.utils.translation import gettext as _


def _day(day: datetime.date, *, weekday: bool, year: bool) -> str:
    """One day: «7 de diciembre», "7 December 2027", «lunes 7 de diciembre»."""
    month = str(MONTHS[day.month])
    if year:
        words = _("%(day)s %(month)s %(year)s") % {
            "day": day.day,
            "month": month,
            "year": day.year,
        }
    else:
        words = _("%(day)s %(month)s") % {"day": day.day, "month": month}
    if weekday:
        words = _("%(weekday)s %(date)s") % {
            "weekday": str(WEEKDAYS[day.weekday()]),
            "date": words,
        }
    return words


def _days(first: datetime.date, last: datetime.date, *, year: bool) -> str:
    """A stretch of days, its preposition included (Spanish says «del … al …»):
    each month and year once where both ends share it."""
    if first == last:
        return _("on %(date)s") % {"date": _day(first, weekday=False, year=year)}
    if first.year != last.year:
        year = True  # each end with its own year
    elif (first.month, first.year) == (last.month, last.year):
        month = {"first": first.day, "last": last.day, "month": str(MONTHS[last.month])}
        if year:
            return _("from %(first)s to %(last)s %(month)s %(year)s") % {
                **month,
                "year": last.year,
            }
        return _("from %(first)s to %(last)s %(month)s") % month
    elif year:
        return _("from %(first)s to %(last)s %(year)s") % {
            "first": _day(first, weekday=False, year=False),
            "last": _day(last, weekday=False, year=False),
            "year": last.year,
        }
    return _("from %(first)s to %(last)s") % {
        "first": _day(first, weekday=False, year=year),
        "last": _day(last, weekday=False, year=year),
    }


def when_written(
    first: datetime.date,
    last: datetime.date | None = None,
    *,
    zone: datetime.tzinfo | None = None,
    weekday: bool | None = None,
    year: bool | None = None,
) -> str:
    """A date, a moment or a stretch of days in the active language, as people
    write them.

    - a date: «7 de diciembre» / "7 December";
    - a moment (an aware datetime), at ``zone``'s clock (the gym's; the active
      zone without one): «lunes 7 de diciembre, 07:30» / "Monday 7 December, 07:30";
    - from ``first`` to ``last`` (dates, both days included): «del 3 al 9 de
      febrero de 2027», «del 28 de febrero al 3 de marzo», "from 28 December 2026
      to 3 January 2027"; one day: «el 3 de febrero» / "on 3 February".

    ``weekday`` names the day of the week (by default only for a moment);
    ``year`` writes the year (by default only when it is not this year where
    ``zone`` is: people leave the current year out). A stretch across years
    always says both.
    """
    moment = first if isinstance(first, datetime.datetime) else None
    if moment is not None:
        moment = timezone.localtime(moment, zone)
        first = moment.date()
    if isinstance(last, datetime.datetime):
        last = timezone.localtime(last, zone).date()
    if year is None:
        this_year = timezone.localtime(timezone.now(), zone).year
        year = first.year != this_year or (last is not None and last.year != this_year)
    if last is not None:
        return _days(first, last, year=year)
    words = _day(first, weekday=bool(moment) if weekday is None else weekday, year=year)
    if moment is None:
        return words
    return _("%(date)s, %(time)s") % {"date": words, "time": f"{moment:%H:%M}"}
