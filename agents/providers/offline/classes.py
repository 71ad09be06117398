"""Classes and bookings: a day's classes, booking one of them (the first of the
list just shown, the one at a time said, a kind on a day), the member's
bookings, and cancelling one."""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from agents.providers.offline.core import (
    Reply,
    Rule,
    Turn,
    by_place,
    day_written,
    fold,
    outcome,
    read_failed,
    said_any,
    when,
)
from agents.providers.offline.dates import day_named

CLASSES = r"clases?|class|classes|sesion|sesiones|sessions?"
BOOK = r"reserva\w*|apunta\w*|inscribe\w*|book|sign me up|sign up"
MINE = (
    r"mis reservas|mis clases|clases tengo|tengo (?:alguna )?(?:clase|reserva)s?"
    r"|my bookings|my classes|did i book|have i booked"
    r"|(?:classes|bookings) do i have|do i have (?:any )?(?:class|booking)s?"
    r"|(?:classes|class) am i (?:booked|signed up)"
)
CANCEL = r"cancela\w*|anula\w*|cancel"
HOUR = re.compile(
    r"\b(?:(?:a las|at)\s+(\d{1,2})(?::(\d{2}))?|(\d{1,2}):(\d{2}))"
    r"\s*(pm|am|h|de la tarde|de la noche)?\b"
)


def _hour(said: str) -> str | None:
    """The time a message names, "19:00": "a las 19:00", "a las 7 de la tarde",
    "at 7pm"."""
    found = HOUR.search(said)
    if not found:
        return None
    hour, minutes = int(found[1] or found[3]), found[2] or found[4] or "00"
    if found[5] and found[5] not in {"am", "h"} and hour < 12:
        hour += 12
    return f"{hour:02d}:{minutes}"


def chosen(said: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The classes or bookings of a list the message points at: by its place in
    the list, the time, or the kind of class; all of them when it names none."""
    if (placed := by_place(said, items)) is not None:
        return [placed]
    hour = _hour(said)
    if hour:
        items = [i for i in items if when(i["starts_at"]).endswith(hour)]
    named = [i for i in items if fold(i["class"]) in said]
    return named or items


def classes(turn: Turn) -> Reply | None:
    """The classes of a day (today when none is said), each with its places."""
    result = turn.result("list_classes")
    if result is None:
        day = (day_named(turn.said, turn.today) or turn.today).isoformat()
        return turn.call("classes", "list_classes", {"date_from": day, "date_to": day})
    if result.get("status") == "no_results":
        args = turn.done[-1][1]
        return Reply(
            _("There are no classes on %(date)s.")
            % {"date": day_written(args["date_from"])}
        )
    if result.get("status") != "ok":
        return Reply(read_failed(result))
    shown = [s for s in result["sessions"] if fold(s["class"]) in turn.said] or result[
        "sessions"
    ]
    lines = [
        ngettext(
            "- %(class)s %(when)s (%(room)s, %(places)s place left)",
            "- %(class)s %(when)s (%(room)s, %(places)s places left)",
            s["places_left"],
        )
        % {
            "class": s["class"],
            "when": when(s["starts_at"]),
            "room": s["room"],
            "places": s["places_left"],
        }
        for s in shown
    ]
    text = _("Classes:") + "\n" + "\n".join(lines)
    return Reply(text, state={"rule": "classes", "shown": shown})


def book(turn: Turn) -> Reply | None:
    """Book one class: from the list just shown, or from the day named's list;
    asked which when the message fits several."""
    shown = turn.state.get("shown") or turn.asked.get("shown")
    if (result := turn.result("book_class")) is not None:
        session = turn.state.get("session") or {}
        return Reply(booked(result, session), state={"shown": shown})
    listed = turn.result("list_classes")
    day = day_named(turn.said, turn.today)
    if listed is None and (day or not shown):
        day_said = (day or turn.today).isoformat()
        arguments = {"date_from": day_said, "date_to": day_said}
        return turn.call("book", "list_classes", arguments, guess=day is None)
    if listed is not None and (listed.get("status") != "ok" or turn.state.get("guess")):
        return classes(turn)  # no list to choose from: today's shown first
    sessions: list[dict[str, Any]] = listed["sessions"] if listed else shown or []
    fits = chosen(turn.said, sessions)
    if turn.answering and len(fits) in {0, len(sessions)}:
        return None  # names none of the classes asked about: another subject
    fits = fits or sessions  # none at the time said: the list to choose from
    if len(fits) != 1:
        lines = [f"- {s['class']} {when(s['starts_at'])}" for s in fits]
        text = _("Which class? Tell me its time or its place in the list:")
        state = {"asked": "which_class", "shown": fits}
        return Reply("\n".join([text, *lines]), state=state)
    arguments = {"session_id": fits[0]["session_id"]}
    return turn.call("book", "book_class", arguments, session=fits[0], shown=sessions)


def booked(result: dict[str, Any], session: dict[str, Any]) -> str:
    """A booking made, waiting for staff, or refused, from the tool's result."""

    def done(got: Any) -> str:
        made = got["booking"]
        return _("Booking confirmed: %(class)s on %(when)s in %(room)s.") % {
            "class": made["class"],
            "when": when(made["starts_at"]),
            "room": made["room"],
        }

    waits = _(
        "The booking of %(class)s on %(when)s is waiting for the staff's approval."
    )
    return outcome(
        result,
        done,
        waits
        % {
            "class": session.get("class", ""),
            "when": when(session.get("starts_at", "")),
        },
    )


def my_bookings(turn: Turn) -> Reply | None:
    """The member's bookings to come."""
    result = turn.result("list_my_bookings")
    if result is None:
        return turn.call("mine", "list_my_bookings", {})
    if result.get("status") == "no_results":
        return Reply(_("You have no class bookings to come."))
    if result.get("status") != "ok":
        return Reply(read_failed(result))
    lines = [
        f"- {b['class']} {when(b['starts_at'])} ({b['room']})"
        for b in result["bookings"]
    ]
    return Reply(_("Your bookings:") + "\n" + "\n".join(lines))


def cancel(turn: Turn) -> Reply | None:
    """Cancel one of her bookings: the one the message points at, or her only one."""
    if (result := turn.result("cancel_booking")) is not None:

        def done(got: Any) -> str:
            gone = got["booking"]
            return _("Booking cancelled: %(class)s on %(when)s.") % {
                "class": gone["class"],
                "when": when(gone["starts_at"]),
            }

        return Reply(
            outcome(result, done, _("It is waiting for the staff's approval."))
        )
    mine = turn.result("list_my_bookings")
    if mine is None:
        return turn.call("cancel", "list_my_bookings", {})
    if mine.get("status") != "ok":
        return my_bookings(turn)
    fits = chosen(turn.said, mine["bookings"])
    if len(fits) != 1:
        lines = [f"- {b['class']} {when(b['starts_at'])}" for b in fits]
        text = _("Which booking? Tell me its class or its time:")
        return Reply("\n".join([text, *lines]))
    return turn.call("cancel", "cancel_booking", {"booking_id": fits[0]["booking_id"]})


RULES = (
    Rule("mine", my_bookings, applies=lambda s: said_any(s, MINE)),
    Rule("cancel", cancel, applies=lambda s: said_any(s, CANCEL)),
    Rule("which_class", book, answers="which_class"),
    Rule("book", book, applies=lambda s: said_any(s, BOOK)),
    Rule("classes", classes, applies=lambda s: said_any(s, CLASSES)),
)
