"""Freezing the membership: the days said outright ("del 1 al 10 de agosto",
"en agosto") proposed at once; a length ("dos semanas") asked from which day,
the days it makes said back and proposed once she says yes. A day no calendar
has, or an end before the start, is told as such and the question stays."""

from __future__ import annotations

import datetime
from typing import Any

from django.utils.translation import gettext as _

from agents.providers.offline.core import (
    Reply,
    Rule,
    Turn,
    days_written,
    outcome,
    said_any,
)
from agents.providers.offline.dates import (
    NoSuchDate,
    day_named,
    days_named,
    length_named,
)

FREEZE = r"congel\w*|freeze|freezing|pausa\w*|pause"
YES = r"si|vale|ok|okay|yes|de acuerdo|confirmo|adelante|claro|sure|go ahead"
NO = r"no|mejor no|cancela|dejalo|no thanks|never mind"


Days = tuple[datetime.date, datetime.date, bool]


def _range(turn: Turn) -> Days | str | None:
    """The first and last days the message names, and whether they were worked
    out from a length; or what is wrong with them (a day that does not exist, an
    end before its start); ``None`` when it names none."""
    days: Days | None = None
    try:
        if said := days_named(turn.said, turn.today):
            days = (*said, False)
        elif length := length_named(turn.said) or turn.asked.get("days"):
            start = day_named(turn.said, turn.today)
            if start:
                days = (start, start + datetime.timedelta(days=length - 1), True)
    except NoSuchDate as wrong:
        return _("The date %(date)s does not exist.") % {"date": wrong.written}
    if days and days[1] < days[0]:
        return _("The end (%(end)s) comes before the start (%(start)s).") % {
            "start": days[0].isoformat(),
            "end": days[1].isoformat(),
        }
    return days


def freeze(turn: Turn) -> Reply | None:
    """A freeze asked for in one message, or its days asked for."""
    if (result := turn.result("freeze_membership")) is not None:
        return Reply(frozen(result, turn.done[-1][1]))
    days = _range(turn)
    length = length_named(turn.said) or turn.asked.get("days")
    if isinstance(days, str):
        text = days + " " + _question(length)
        return Reply(text, state={"asked": "days", "days": length})
    if days is None:
        return Reply(_question(length), state={"asked": "days", "days": length})
    start, end = (day.isoformat() for day in days[:2])
    if days[2]:
        # Days the model worked out from a length: said back before asking staff.
        text = _("Shall I ask to freeze your membership %(dates)s?")
        return Reply(
            text % {"dates": days_written(start, end)},
            state={"asked": "confirm", "start": start, "end": end, "days": length},
        )
    return turn.call("freeze", "freeze_membership", {"start": start, "end": end})


def _question(length: int | None = None) -> str:
    if length:
        return _(
            "From which day do you want to freeze it? For example: «from next Monday»."
        )
    return _("Which days do you want to freeze? For example: «from 1 to 10 August».")


def days_given(turn: Turn) -> Reply | None:
    """The answer to its question of which days: read as that answer; a message
    that names no days is another subject."""
    return None if _range(turn) is None else freeze(turn)


def confirmed(turn: Turn) -> Reply | None:
    """Yes (the freeze proposed) or no (nothing changed) to the days it said
    back; other days instead are read as the answer to its first question."""
    if said_any(turn.said, NO) and not said_any(turn.said, YES):
        return Reply(_("All right: I will not change anything."))
    if not said_any(turn.said, YES):
        return days_given(turn)
    arguments = {"start": turn.asked["start"], "end": turn.asked["end"]}
    return turn.call("freeze", "freeze_membership", arguments)


def frozen(result: dict[str, Any], args: dict[str, Any]) -> str:
    """A freeze made, waiting for staff, or refused, from the tool's result."""

    def done(got: Any) -> str:
        made = got["freeze"]
        return _("Membership frozen %(dates)s.") % {
            "dates": days_written(made["start"], made["end"])
        }

    waits = _("The freeze %(dates)s is waiting for the staff's approval.") % {
        "dates": days_written(args.get("start"), args.get("end"))
    }
    return outcome(result, done, waits)


RULES = (
    Rule("days", days_given, answers="days"),
    Rule("confirm", confirmed, answers="confirm"),
    Rule("freeze", freeze, applies=lambda s: said_any(s, FREEZE)),
)
