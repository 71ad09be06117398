"""The offline demo model's intents about the gym's classes: a day's classes, and
booking one (also the first, second or last of the list just shown)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from agents.providers.offline.base import Intents, undone_since, when_of
from agents.providers.offline.hours import PartOfDay, part_of_day_named, time_named
from agents.providers.offline.words import (
    CANCEL_WORDS,
    GRAMS,
    asks_for,
    asks_how,
    day_named,
    day_of,
    has,
    kind_named,
    kinds_named,
    meal_named,
    ordinal_named,
    week_days_named,
    weekdays_named,
)
from gymnasia.text import fold

#: How many classes a list shows; "the last one" is the last of those.
CLASSES_SHOWN = 12
#: Words that ask for a place in a class ("quiero apuntarme a yoga").
BOOK_WORDS = (
    "reserva",
    "apuntame",
    "apuntarme",
    "me apunto",
    "inscribeme",
    "inscribirme",
    "me inscribo",
    "book",
    "sign me up",
    "sign up",
)
#: "What is on" a day, as members type it.
WHATS_ON = ("que hay", "what's on", "whats on", "what is on")
#: A question about the places left in classes ("¿cuántas plazas quedan?", "¿hay
#: sitio?", "any spots left?"), not about her own place ("¿tengo plaza?").
PLACES_LEFT = re.compile(
    r"\b(?:plazas?|sitios?|huecos?)\b.*\b(?:quedan?|libres?)\b"
    r"|\b(?:quedan?|hay)\b.*\b(?:plazas?|sitio|hueco)\b"
    r"|\b(?:places?|spots?|spaces?|seats?|room)\b.*\b(?:left|free|available)\b"
    r"|\b(?:any|how many)\b.*\b(?:places?|spots?|spaces?|seats?)\b"
    r"|\bis there (?:any )?room\b"
)


class ClassIntents(Intents):
    def _classes(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        like: Mapping[str, Any] | None = None,
        before: Mapping[str, dict[str, Any]] | None = None,
        previous: str = "",
        booked: Mapping[str, Any] | None = None,
    ) -> Any:
        """A day's (or the week's) classes; ``like``: the arguments of the list
        asked for just before, of which this is the same question for another
        day ("¿y el sábado?": the same kind of class), or for one of its classes
        ("¿y la de las 19:00?"). The places left ("¿cuántas plazas quedan?") are
        read again (places change), of the classes named, or else of those of the
        list asked for just before (``before``, in the part of the day her
        ``previous`` message named), or of the class just ``booked``."""
        places = bool(PLACES_LEFT.search(said))
        day = day_named(said, self.today)
        week = None if day else week_days_named(said, self.today)
        part_before = None
        at = None  # the hour of the class just booked
        if places and like is None and not (day or week) and before:
            like = before.get("list_classes")
            if like is not None:
                part_before = part_of_day_named(previous)
            elif booked and not kind_named(said):
                # "¿Cuántas plazas quedan?" right after a booking: in that class.
                starts = when_of(booked)
                like = {
                    "date_from": starts[:10],
                    "date_to": starts[:10],
                    "class_type": fold(booked["class"]),
                }
                at = (int(starts[11:13]), int(starts[14:16]))
        if like is not None and not places:
            # "¿Y el sábado?", "¿y en la de las 19:00?" after asking for places.
            places = bool(PLACES_LEFT.search(previous))
        kind = kind_named(said) or (like or {}).get("class_type")
        asked = (
            has(said, "clase", "horario", "class", "schedule")
            or kind_named(said)
            # "¿Qué hay el viernes?", "What's on on Friday?"
            or (has(said, *WHATS_ON) and (day or week))
            or places
        )
        if not (asked or like is not None):
            return None
        if day:
            first, last = day, day
        elif week:
            first, last = week  # "este fin de semana", "la semana que viene"
        elif like and like.get("date_from") and like.get("date_to"):
            first = datetime.date.fromisoformat(like["date_from"])
            last = datetime.date.fromisoformat(like["date_to"])
        else:
            first, last = self.today, self.today + datetime.timedelta(days=6)
        if "list_classes" not in results:
            arguments: dict[str, Any] = {
                "date_from": first.isoformat(),
                "date_to": last.isoformat(),
            }
            if kind:
                arguments["class_type"] = kind
            return self._unavailable("list_classes", offered) or self._call(
                "list_classes", arguments
            )
        result = results["list_classes"][-1]
        if result.get("status") == "no_results":
            return self._none_scheduled(first, last, kind), []
        if result.get("status") != "ok":
            return self._failure(result), []
        sessions = result["sessions"]
        time = time_named(said) or at
        # "A las 7 de la tarde" is an hour, not the whole afternoon.
        part = (part_of_day_named(said) or part_before) if time is None else None
        if part is not None:
            # "¿Qué clases hay el jueves por la tarde?": those of the afternoon.
            sessions = [s for s in sessions if _in_part(s, part)]
            if not sessions:
                return self._none_scheduled(first, last, kind, part), []
        if time is not None:
            # "¿Cuántas plazas quedan en la de las 19:00?": that class.
            sessions = [s for s in sessions if _at(s, time)]
            if not sessions:
                return self._no_such_class(kind, time, first, last), []
        if places:
            return self._places_left(sessions), []
        lines = [
            f"- {s['class']} {when_of(s)} ({s['room']}, {self._places_of(s)})"
            for s in sessions[:CLASSES_SHOWN]
        ]
        return self._t("Clases:", "Classes:") + "\n" + "\n".join(
            lines + self._more(sessions)
        ), []

    def _places_of(self, session: Mapping[str, Any]) -> str:
        """A class's places as a list line says them."""
        left = session["places_left"]
        if session.get("member_booked"):
            return self._t("ya tienes plaza", "you are booked")
        if left <= 0:
            return self._t("completa", "full")
        if left == 1:
            return self._t("1 plaza libre", "1 place left")
        return self._t(f"{left} plazas libres", f"{left} places left")

    def _places_left(self, sessions: list[dict[str, Any]]) -> str:
        """The places left in the classes asked about: a sentence for one."""
        if len(sessions) > 1:
            lines = [
                f"- {s['class']} {when_of(s)} ({s['room']}): {self._places_of(s)}"
                for s in sessions[:CLASSES_SHOWN]
            ]
            return (
                self._t("Plazas libres:", "Places left:")
                + "\n"
                + "\n".join(lines + self._more(sessions))
            )
        [session] = sessions
        left = session["places_left"]
        es = f"{session['class']} el {when_of(session)} ({session['room']})"
        en = f"{session['class']} on {when_of(session)} ({session['room']})"
        if session.get("member_booked"):
            if left <= 0:
                rest = self._t("no quedan más", "no other place is left")
            elif left == 1:
                rest = self._t("queda 1 plaza libre", "1 place is left")
            else:
                rest = self._t(
                    f"quedan {left} plazas libres", f"{left} places are left"
                )
            return self._t(
                f"Ya tienes plaza en {es}; {rest}.",
                f"You already have a place in {en}; {rest}.",
            )
        if left <= 0:
            return self._t(f"{es} está completa.", f"{en} is full.")
        if left == 1:
            return self._t(f"Queda 1 plaza en {es}.", f"There is 1 place left in {en}.")
        return self._t(
            f"Quedan {left} plazas en {es}.", f"There are {left} places left in {en}."
        )

    def _more(self, sessions: list[dict[str, Any]]) -> list[str]:
        """The line that says a list was cut short: what is not shown is not
        "none"."""
        more = len(sessions) - CLASSES_SHOWN
        if more <= 0:
            return []
        return [
            self._t(
                f"Y {more} más: dime una clase o un día para acotar la lista.",
                f"And {more} more: name a class or a day to narrow the list.",
            )
        ]

    def _days_meant(
        self,
        day: datetime.date | None,
        shown: list[dict[str, Any]],
        *,
        named: bool,
        kind: str | None,
        kinds_listed: set[str],
    ) -> tuple[datetime.date, datetime.date]:
        """The days a booking is looked for on: the day said; for a class named
        without a day ("the pilates one", "the one at 19:00") after a list, that
        list's days (its days were being talked about, not today), unless the
        whole list (``kinds_listed``, the lines not shown too) was of another
        kind of class ("la primera de yoga" after a list of pilates classes):
        then the next 7 days, as for a list asked for without a day; else
        today."""
        if day is None and kind and len(kinds_listed) == 1 and kind not in kinds_listed:
            return self.today, self.today + datetime.timedelta(days=6)
        if day is None and named and shown:
            days = sorted({datetime.date.fromisoformat(when_of(s)[:10]) for s in shown})
            return days[0], days[-1]
        return day or self.today, day or self.today

    def _no_such_class(
        self,
        kind: str | None,
        time: tuple[int, int | None] | None,
        first: datetime.date,
        last: datetime.date,
        part: PartOfDay | None = None,
    ) -> str:
        """No class to book: of the kind and at the time or in the part of the
        day said, on the days looked at."""
        when = self._t(f"el {first}", f"on {first}")
        if first != last:
            when = self._t(f"del {first} al {last}", f"from {first} to {last}")
        if part is not None:
            when = f"{self._t(part.spanish, part.english)} {when}"
        if time is not None:
            hour = f"{time[0]}" if time[1] is None else f"{time[0]}:{time[1]:02d}"
            when = self._t(f"a las {hour} {when}", f"at {hour} {when}")
        if kind:
            return self._t(
                f"No hay clases de {kind} {when}.", f"There is no {kind} class {when}."
            )
        return self._t(f"No hay ninguna clase {when}.", f"There is no class {when}.")

    def _none_scheduled(
        self,
        first: datetime.date,
        last: datetime.date,
        kind: str | None,
        part: PartOfDay | None = None,
    ) -> str:
        """No class to list: of the kind, in the part of the day and on the days
        asked about ("no yoga tomorrow" is not "no classes tomorrow")."""
        es_kind = f" de {kind}" if kind else ""
        en_kind = f" {kind}" if kind else ""
        es_part = f" {part.spanish}" if part else ""
        en_part = f" {part.english}" if part else ""
        if first == last == self.today:
            # The classes already begun are not listed: none is left today.
            return self._t(
                f"Hoy no quedan clases{es_kind}{es_part}.",
                f"There are no more{en_kind} classes today{en_part}.",
            )
        if first == last:
            return self._t(
                f"No hay clases{es_kind}{es_part} el {first.isoformat()}.",
                f"There are no{en_kind} classes{en_part} on {first.isoformat()}.",
            )
        if (first, last) == (self.today, self.today + datetime.timedelta(days=6)):
            return self._t(
                f"No hay clases{es_kind}{es_part} en los próximos 7 días.",
                f"There are no{en_kind} classes{en_part} in the next 7 days.",
            )
        return self._t(
            f"No hay clases{es_kind}{es_part} del {first} al {last}.",
            f"There are no{en_kind} classes{en_part} from {first} to {last}.",
        )

    def _book(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
        before: Mapping[str, dict[str, Any]],
        shown: list[dict[str, Any]],
        like: Mapping[str, Any] | None = None,
    ) -> Any:
        """A class booked; ``shown``: the classes the last list showed her;
        ``like``: the booking just made, of which this is another ("y también el
        de las 19:00": that kind, that day, unless said)."""
        if not (like or asks_for(said, *BOOK_WORDS)):
            return None
        if has(said, "al gimnasio", "the gym") and not (
            kind_named(said) or has(said, "clase", "class")
        ):
            return None  # "quiero apuntarme al gimnasio": joining it, no class
        if has(said, *CANCEL_WORDS):
            return None
        if GRAMS.search(said) or meal_named(said):
            return None  # "apúntame 200 g de pollo en la comida": the diary's
        kinds, weekdays = kinds_named(said), weekdays_named(said)
        if not like and (len(kinds) > 1 or len(weekdays) > 1):
            # "Reserva yoga el jueves y pilates el viernes": never one of them
            # booked and the other left unsaid.
            es = " ".join(["reserva", *kinds[:1], *(f"el {d}" for d in weekdays[:1])])
            en = " ".join(
                ["book", *kinds[:1], *(f"on {d.capitalize()}" for d in weekdays[:1])]
            )
            return self._t(
                f"Las clases se reservan de una en una: dime primero una, por "
                f"ejemplo «{es}».",
                f'Classes are booked one at a time: tell me one first, for example "{en}".',
            ), []
        kind = kind_named(said)
        day = day_named(said, self.today)
        if like:
            kind = kind or fold(like["class"])
            day = day or datetime.date.fromisoformat(when_of(like)[:10])
            shown = []  # not the list shown before that booking
        asked = before.get("list_classes")
        if (
            asked
            and not (day or like or shown)
            and asked.get("date_from") == asked.get("date_to")
        ):
            # "Apúntame a las 9" right after asking about a day that had none of
            # the classes asked about: that day's, of that kind, never today's.
            day = day_of({"date": asked.get("date_from")})
            kind = kind or asked.get("class_type")
        place = ordinal_named(said)
        time = time_named(said)
        # "Por la tarde" narrows the classes unless an hour is said.
        part = part_of_day_named(said) if time is None else None
        kinds_shown = {fold(s["class"]) for s in shown}
        if day and not kind and len(kinds_shown) == 1:
            # "Reserva la del miércoles" after a list of spinning classes: the
            # spinning class of that day, not any class of it.
            [kind] = kinds_shown
        if (
            len(kinds_shown) == 1
            and "list_classes" in before
            and not (day or kind or place is not None or time)
            and not has(said, "una", "otra", "a class", "another")
        ):
            # "Apúntame" right after a list of one class: that one; after a list
            # of one kind, which of them ("reserva una clase" still asks which
            # class and day).
            if len(shown) == 1:
                place = 0
            else:
                [kind] = kinds_shown
        if asks_how(said) and not (day or kind or place is not None):
            return self._t(
                "Sí: dime qué clase y qué día (por ejemplo, «reserva spinning el "
                "jueves») y la reservo.",
                'Yes: tell me which class and which day (for example, "book spinning '
                'on Thursday") and I will book it.',
            ), []
        if not (day or kind or place is not None or time):
            # "Reserva una clase": nothing says which, however few there are today.
            return self._unavailable("book_class", offered) or (
                self._t(
                    "¿Qué clase y qué día? Por ejemplo: «reserva spinning el jueves».",
                    'Which class, and which day? For example: "book spinning on '
                    'Thursday".',
                ),
                [],
            )
        if place is not None and not (day or kind or shown):
            # "Book the first one" with no list shown: the first of what?
            return self._unavailable("book_class", offered) or (
                self._t(
                    "¿La primera de qué clases? Pregúntame antes qué clases hay (por "
                    "ejemplo, «¿qué clases hay mañana?»).",
                    "The first of which classes? Ask me first which classes there "
                    'are (for example, "what classes are on tomorrow?").',
                ),
                [],
            )
        of_kind = [s for s in shown if not kind or fold(s["class"]) == kind]
        kinds_listed = {
            fold(s["class"])
            for s in earlier.get("list_classes", {}).get("sessions", [])
        }
        first, last = self._days_meant(
            day,
            shown,
            named=bool(kind or time or part),
            kind=kind,
            kinds_listed=kinds_listed,
        )
        if not day and (place is not None or kind or time or part) and of_kind:
            # "Book the first one", "book the pilates one", "the one at 19:00"
            # after a list of classes: that list's.
            listed = {"sessions": of_kind}
        elif "list_classes" not in results:
            arguments: dict[str, Any] = {
                "date_from": first.isoformat(),
                "date_to": last.isoformat(),
            }
            if kind:
                arguments["class_type"] = kind
            return self._unavailable("book_class", offered) or self._call(
                "list_classes", arguments
            )
        else:
            listed = results["list_classes"][-1]
        if "book_class" not in results:
            sessions = listed.get("sessions", [])[:CLASSES_SHOWN]
            if place is not None and sessions:
                if not -len(sessions) <= place < len(sessions):
                    return self._t(
                        "En esa lista no hay tantas clases.",
                        "That list does not have that many classes.",
                    ), []
                sessions = [sessions[place]]
            if time is not None and place is None:
                sessions = [s for s in sessions if _at(s, time)]
            if part is not None and place is None:
                sessions = [s for s in sessions if _in_part(s, part)]
            if not sessions:
                return self._no_such_class(kind, time, first, last, part), []
            hers = [s for s in sessions if s.get("member_booked")]
            sessions = [s for s in sessions if not s.get("member_booked")]
            if hers and not sessions:
                when = when_of(hers[0])
                return self._t(
                    f"Ya tienes plaza en esa clase: {hers[0]['class']} el {when}.",
                    f"You already have a place in that class: {hers[0]['class']} "
                    f"on {when}.",
                ), []
            sessions = [s for s in sessions if s["places_left"] > 0]
            if not sessions:
                return self._t(
                    "No hay plazas libres en esa clase ese día.",
                    "There are no free places in that class that day.",
                ), []
            if len(sessions) > 1:  # never a guess: the member says which
                return self._which_class(sessions), []
            return self._unavailable("book_class", offered) or self._call(
                "book_class", {"session_id": sessions[0]["session_id"]}
            )
        result = results["book_class"][-1]
        if result.get("status") == "ok":
            booking = result["booking"]
            return self._t(
                f"Reserva confirmada: {booking['class']} el "
                f"{when_of(booking)} en {booking['room']}.",
                f"Booking confirmed: {booking['class']} on "
                f"{when_of(booking)} in {booking['room']}.",
            ), []
        session = (result.get("facts") or {}).get("session")
        if result.get("status") == "pending_approval" and session:
            # Named, as she will read it in the staff's answer.
            return self._t(
                f"La reserva de {session['class']} el {when_of(session)} queda "
                "pendiente de que el equipo la apruebe.",
                f"The booking of {session['class']} on {when_of(session)} is "
                "waiting for the staff's approval.",
            ), []
        undone = undone_since("book_class", result, earlier)
        return self._failure(result, undone=undone), []

    def _which_class(self, sessions: list[dict[str, Any]]) -> str:
        """Several classes could be meant: which one, and how to say it."""
        names = ", ".join(f"{s['class']} {when_of(s)}" for s in sessions[:5])
        first = sessions[0]
        day, time = when_of(first).split(" ")
        kind = fold(first["class"])
        return self._t(
            f"Hay varias: {names}. ¿Cuál reservo? Dímelo con su hora, por ejemplo: "
            f"«reserva {kind} el {day} a las {time}».",
            f"There are several: {names}. Which one shall I book? Tell me its time, "
            f'for example: "book {kind} on {day} at {time}".',
        )


def shown_of(
    listed: Mapping[str, Any] | None,
    previous: str,
    asked: str,
    today: datetime.date,
    booked: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The classes a list showed her: those of the tool's result (``listed``) in
    the part of the day or at the hour her question (``asked``, said after
    ``previous``) named, as many as a list shows; a question of the places left
    that named no day kept the part of the day of the one before it, or, asked
    right after a booking (``booked``) and naming no class, showed that class."""
    sessions = list((listed or {}).get("sessions", []))
    said = fold(asked)
    time = time_named(said)
    part = None
    if time is None:
        part = part_of_day_named(said)
        named = day_named(said, today) or week_days_named(said, today)
        if PLACES_LEFT.search(said) and not named:
            if booked is not None and not kind_named(said):
                return [s for s in sessions if s["session_id"] == booked["session_id"]]
            part = part or part_of_day_named(fold(previous))
    if part is not None:
        sessions = [s for s in sessions if _in_part(s, part)]
    if time is not None:
        sessions = [s for s in sessions if _at(s, time)]
    return sessions[:CLASSES_SHOWN]


def _in_part(session: Mapping[str, Any], part: PartOfDay) -> bool:
    """Whether a session starts in a part of the day said ("por la tarde")."""
    return part.start <= int(when_of(session)[11:13]) < part.end


def _at(session: Mapping[str, Any], time: tuple[int, int | None]) -> bool:
    """Whether a session starts at a time said ("a las 7" is any minute of 7)."""
    hour, minute = int(when_of(session)[11:13]), int(when_of(session)[14:16])
    return hour == time[0] and (time[1] is None or minute == time[1])
