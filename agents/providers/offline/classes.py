"""The offline demo model's intents about classes: a day's classes, booking one
(also the first, second or last of the list just shown), the member's bookings,
and cancelling one."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from agents.providers.offline.base import Intents, undone_since
from agents.providers.offline.words import (
    GRAMS,
    TAKE_AWAY,
    asks_how,
    day_named,
    has,
    kind_named,
    meal_named,
    ordinal_named,
    time_named,
)
from gymnasia.text import fold

#: How many classes a list shows; "the last one" is the last of those.
CLASSES_SHOWN = 12
#: "What is on" a day, as members type it.
WHATS_ON = ("que hay", "what's on", "whats on", "what is on")
#: "What do I have" on a day, as members ask of their own day at the gym.
WHATS_MINE = ("que tengo", "what do i have", "what have i got", "what's on for me")
#: Words of her meal diary, which "¿qué tengo hoy?" is not about.
DIARY_WORDS = ("diario", "comi", "diary", "meal", "food", "eat", "i ate")
#: Words that say she cannot go to a class ("al final no puedo ir").
CANNOT_GO = (
    "no puedo ir",
    "no podre ir",
    "no voy a poder ir",
    "no puedo asistir",
    "can't make it",
    "cannot make it",
    "can't go",
    "cannot go",
    "won't make it",
    "can't come",
    "cannot come",
)
#: Words that take a booking away ("bórrame de la clase de spinning").
CANCEL_WORDS = (
    "cancela",
    "anula",
    "desapunta",
    "darme de baja",
    "dame de baja",
    "cancel",
    *TAKE_AWAY,
)


class ClassIntents(Intents):
    def _classes(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        like: Mapping[str, Any] | None = None,
    ) -> Any:
        """A day's (or the week's) classes; ``like``: the arguments of the list
        asked for just before, of which this is the same question for another
        day ("¿y el sábado?": the same kind of class)."""
        kind = kind_named(said) or (like or {}).get("class_type")
        asked = (
            has(said, "clase", "horario", "class", "schedule")
            or kind_named(said)
            # "¿Qué hay el viernes?", "What's on on Friday?"
            or (has(said, *WHATS_ON) and day_named(said, self.today))
        )
        if not (asked or like is not None):
            return None
        if "list_classes" not in results:
            day = day_named(said, self.today)
            start, end = (
                (day, day)
                if day
                else (self.today, self.today + datetime.timedelta(days=6))
            )
            arguments: dict[str, Any] = {
                "date_from": start.isoformat(),
                "date_to": end.isoformat(),
            }
            if kind:
                arguments["class_type"] = kind
            return self._unavailable("list_classes", offered) or self._call(
                "list_classes", arguments
            )
        result = results["list_classes"][-1]
        if result.get("status") == "no_results":
            return self._none_scheduled(said, kind), []
        if result.get("status") != "ok":
            return self._failure(result), []
        lines = [
            f"- {s['class']} {_when(s)} ({s['room']}, "
            + (
                self._t("ya tienes plaza)", "you are booked)")
                if s.get("member_booked")
                else self._t(
                    f"{s['places_left']} plazas libres)",
                    f"{s['places_left']} places left)",
                )
            )
            for s in result["sessions"][:CLASSES_SHOWN]
        ]
        more = len(result["sessions"]) - CLASSES_SHOWN
        if more > 0:
            # A list cut short says so: what is not shown is not "none".
            lines.append(
                self._t(
                    f"Y {more} más: dime una clase o un día para acotar la lista.",
                    f"And {more} more: name a class or a day to narrow the list.",
                )
            )
        return self._t("Clases:", "Classes:") + "\n" + "\n".join(lines), []

    def _days_meant(
        self,
        day: datetime.date | None,
        shown: list[dict[str, Any]],
        *,
        named: bool,
    ) -> tuple[datetime.date, datetime.date]:
        """The days a booking is looked for on: the day said; for a class named
        without a day ("the pilates one", "the one at 19:00") after a list, that
        list's days (its days were being talked about, not today); else today."""
        if day is None and named and shown:
            days = sorted({datetime.date.fromisoformat(_when(s)[:10]) for s in shown})
            return days[0], days[-1]
        return day or self.today, day or self.today

    def _no_such_class(
        self,
        kind: str | None,
        time: tuple[int, int | None] | None,
        first: datetime.date,
        last: datetime.date,
    ) -> str:
        """No class to book: of the kind and at the time said, on the days looked
        at."""
        when = self._t(f"el {first}", f"on {first}")
        if first != last:
            when = self._t(f"del {first} al {last}", f"from {first} to {last}")
        if time is not None:
            hour = f"{time[0]}" if time[1] is None else f"{time[0]}:{time[1]:02d}"
            when = self._t(f"a las {hour} {when}", f"at {hour} {when}")
        if kind:
            return self._t(
                f"No hay clases de {kind} {when}.", f"There is no {kind} class {when}."
            )
        return self._t(f"No hay ninguna clase {when}.", f"There is no class {when}.")

    def _none_scheduled(self, said: str, kind: str | None) -> str:
        """No class to list: of the kind and on the day asked about, when named
        ("no yoga tomorrow" is not "no classes tomorrow")."""
        day = day_named(said, self.today)
        of_kind = self._t(f" de {kind}", f" {kind}") if kind else ""
        if day == self.today:
            # The classes already begun are not listed: none is left today.
            return self._t(
                f"Hoy no quedan clases{of_kind}.",
                f"There are no more{of_kind} classes today.",
            )
        if day:
            return self._t(
                f"No hay clases{of_kind} el {day.isoformat()}.",
                f"There are no{of_kind} classes on {day.isoformat()}.",
            )
        return self._t(
            f"No hay clases{of_kind} en los próximos 7 días.",
            f"There are no{of_kind} classes in the next 7 days.",
        )

    def _book(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
        before: Mapping[str, dict[str, Any]],
    ) -> Any:
        if not has(said, "reserva", "apuntame", "inscribeme", "book", "sign me up"):
            return None
        if has(said, *CANCEL_WORDS):
            return None
        if GRAMS.search(said) or meal_named(said):
            return None  # "apúntame 200 g de pollo en la comida": the diary's
        shown = earlier.get("list_classes", {}).get("sessions", [])[:CLASSES_SHOWN]
        kind = kind_named(said)
        day = day_named(said, self.today)
        place = ordinal_named(said)
        time = time_named(said)
        kinds_shown = {fold(s["class"]) for s in shown}
        if day and not kind and len(kinds_shown) == 1:
            # "Reserva la del miércoles" after a list of spinning classes: the
            # spinning class of that day, not any class of it.
            [kind] = kinds_shown
        if (
            len(shown) == 1
            and "list_classes" in before
            and not (day or kind or place is not None or time)
            and not has(said, "una", "otra", "a class", "another")
        ):
            # "Apúntame" right after a list of one class: that one ("reserva una
            # clase" still asks which).
            place = 0
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
        first, last = self._days_meant(day, shown, named=bool(kind or time))
        if not day and (place is not None or kind or time) and of_kind:
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
            if not sessions:
                return self._no_such_class(kind, time, first, last), []
            hers = [s for s in sessions if s.get("member_booked")]
            sessions = [s for s in sessions if not s.get("member_booked")]
            if hers and not sessions:
                when = _when(hers[0])
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
                f"{_when(booking)} en {booking['room']}.",
                f"Booking confirmed: {booking['class']} on "
                f"{_when(booking)} in {booking['room']}.",
            ), []
        undone = undone_since("book_class", result, earlier)
        return self._failure(result, undone=undone), []

    def _booked_when(
        self,
        said: str,
        earlier: Mapping[str, dict[str, Any]],
        before: Mapping[str, dict[str, Any]],
    ) -> Any:
        """ "¿A qué hora es?", "When is it?" right after a booking, or a list of one
        class: that class."""
        if not has(said, "a que hora es", "cuando es", "when is it", "what time does"):
            return None
        session = _class_just_told(earlier, before)
        if session is None:
            return None
        return self._t(
            f"{session['class']} es el {_when(session)} en {session['room']}.",
            f"{session['class']} is on {_when(session)} in {session['room']}.",
        ), []

    def _cannot_go(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
        before: Mapping[str, dict[str, Any]],
    ) -> Any:
        """ "Al final no puedo ir": never a cancellation on a guess; how to ask for
        one, naming the class she was just told of (booked, or listed as hers)."""
        if not has(said, *CANNOT_GO):
            return None
        unavailable = self._unavailable("cancel_booking", offered)
        if unavailable is not None:
            return unavailable
        booking = _class_just_told(earlier, before)
        if booking is not None and "booking_id" not in booking:
            # A class just listed is hers only when she has a place in it.
            booking = booking if booking.get("member_booked") else None
        if booking is None:
            return self._t(
                "Si quieres cancelar una reserva, dime cuál (por ejemplo, «cancela mi "
                "reserva de spinning»).",
                "If you want to cancel a booking, tell me which one (for example, "
                '"cancel my spinning booking").',
            ), []
        kind, day = fold(booking["class"]), _when(booking)[:10]
        return self._t(
            f"Si quieres cancelar tu plaza en {booking['class']} el {_when(booking)}, "
            f"dime «cancela mi reserva de {kind} del {day}».",
            f"If you want to cancel your place in {booking['class']} on "
            f'{_when(booking)}, say "cancel my {kind} booking on {day}".',
        ), []

    def _which_class(self, sessions: list[dict[str, Any]]) -> str:
        """Several classes could be meant: which one, and how to say it."""
        names = ", ".join(f"{s['class']} {_when(s)}" for s in sessions[:5])
        first = sessions[0]
        day, time = _when(first).split(" ")
        kind = fold(first["class"])
        return self._t(
            f"Hay varias: {names}. ¿Cuál reservo? Dímelo con su hora, por ejemplo: "
            f"«reserva {kind} el {day} a las {time}».",
            f"There are several: {names}. Which one shall I book? Tell me its time, "
            f'for example: "book {kind} on {day} at {time}".',
        )

    def _cancel(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
        before: Mapping[str, dict[str, Any]],
    ) -> Any:
        kind = kind_named(said)
        # "Cancela la del martes": a booking named by its day.
        of_a_day = has(said, "cancela", "anula", "cancel") and day_named(
            said, self.today
        )
        booked = earlier.get("book_class", {}).get("booking", {}).get("booking_id")
        # "Cancélala", "cancel it": the booking last made, or the only one last
        # listed, when that is what she was last told of.
        listed = earlier.get("list_my_bookings", {}).get("bookings", [])
        if "book_class" in before:
            meant = booked
        elif "list_my_bookings" in before and len(listed) == 1:
            meant = listed[0]["booking_id"]
        else:
            meant = None
        it = meant is not None and has(said, "cancelala", "anulala", "cancel it")
        if not (
            has(said, *CANCEL_WORDS)
            and (
                has(said, "reserva", "clase", "booking", "class")
                or kind
                or of_a_day
                or it
            )
        ):
            return None
        that = it or has(said, "esa", "esta", "that", "this")
        if has(said, "todas", "todos", "all my", "all of", "every"):
            # One call cancels one booking: never a partial "done" for "all".
            return self._unavailable("cancel_booking", offered) or (
                self._t(
                    "Las reservas se cancelan de una en una: dime cuál (por ejemplo, "
                    "«cancela mi reserva de spinning»).",
                    "Bookings are cancelled one at a time: tell me which one (for "
                    'example, "cancel my spinning booking").',
                ),
                [],
            )
        if asks_how(said) and not (kind or that or ordinal_named(said) is not None):
            return self._unavailable("cancel_booking", offered) or (
                self._t(
                    "Sí: dime qué reserva (por ejemplo, «cancela mi reserva de "
                    "spinning») y la cancelo.",
                    'Yes: tell me which booking (for example, "cancel my spinning '
                    'booking") and I will cancel it.',
                ),
                [],
            )
        if "list_my_bookings" not in results:
            return self._unavailable("cancel_booking", offered) or self._call(
                "list_my_bookings", {}
            )
        bookings = results["list_my_bookings"][-1].get("bookings", [])
        day = day_named(said, self.today)
        chosen = [
            b
            for b in bookings
            if (not kind or fold(b["class"]) == kind)
            and (not day or _when(b)[:10] == day.isoformat())
        ]
        place = ordinal_named(said)
        if place is not None and chosen and "cancel_booking" not in results:
            # "Cancel my second booking": of the bookings, soonest first.
            if not -len(chosen) <= place < len(chosen):
                return self._t(
                    "No tienes tantas reservas.", "You do not have that many bookings."
                ), []
            chosen = [chosen[place]]
        if it:
            chosen = [b for b in bookings if b["booking_id"] == meant]
        elif that and booked is not None:
            # "Cancel that booking" right after one was made: that one.
            chosen = [b for b in bookings if b["booking_id"] == booked]
        if "cancel_booking" not in results:
            if not chosen:
                return self._t(
                    "No tienes reservas que cancelar.", "You have no booking to cancel."
                ), []
            if len(chosen) > 1:  # never a guess: the member says which
                return self._which_booking(chosen), []
            return self._call("cancel_booking", {"booking_id": chosen[0]["booking_id"]})
        result = results["cancel_booking"][-1]
        if result.get("status") == "ok":
            return self._t("Reserva cancelada.", "Booking cancelled."), []
        return self._failure(result), []

    def _which_booking(self, bookings: list[dict[str, Any]]) -> str:
        """Several bookings could be meant: which one, and how to say it (with its
        day when another of the same class is listed)."""
        listed = ", ".join(f"{b['class']} {_when(b)}" for b in bookings[:5])
        first = bookings[0]
        kind = fold(first["class"])
        day = _when(first)[:10]
        twice = sum(fold(b["class"]) == kind for b in bookings) > 1
        return self._t(
            f"Tienes varias: {listed}. ¿Cuál cancelo? Dímelo, por ejemplo: "
            f"«cancela mi reserva de {kind}" + (f" del {day}»." if twice else "»."),
            f"You have several: {listed}. Which one shall I cancel? Tell me, for "
            f'example: "cancel my {kind} booking'
            + (f" on {day}" if twice else "")
            + '".',
        )

    def _move(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        """A booking to move: two changes, a cancellation and a booking, which the
        demo model never makes half of; it says how to ask for both."""
        if not (
            has(said, "cambia", "mueve", "change", "move", "switch", "reschedul")
            and (
                has(said, "reserva", "clase", "booking", "class")
                # "Cámbiala a la de las 7:30", "move it to the 7:30 one": the
                # booking just talked about.
                or re.search(r"\b(cambia|mueve)(la|mela)\b", said)
                or re.search(r"\b(change|move|switch) (it|that)\b", said)
            )
        ):
            return None
        return self._t(
            "Para cambiar una reserva, cancela la que tienes y reserva la nueva "
            "(por ejemplo, «cancela mi reserva de yoga» y luego «reserva yoga el "
            "jueves»).",
            "To change a booking, cancel the one you have and book the new one "
            '(for example, "cancel my yoga booking", then "book yoga on '
            'Thursday").',
        ), []

    def _bookings(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        """The member's bookings, asked about ("¿qué tengo reservado?"): a question,
        never a request to book. With a day named ("¿qué tengo mañana?", "do I
        have a class on Friday?"), that day's."""
        day = day_named(said, self.today)
        # "¿Cuál es mi próxima clase?": the first of hers to come.
        next_one = has(said, "mi proxima", "my next")
        asks = (
            has(said, "mis reserva", "my booking", "reservad", "booked", "did i book")
            or (has(said, "tengo", "have") and has(said, "reserva", "booking"))
            # "¿Qué clases tengo?", "Do I have a class tomorrow?": hers, not the
            # gym's ("What classes do you have?").
            or (has(said, "tengo", "do i have") and has(said, "clase", "class"))
            # "¿Qué tengo mañana?": her day at the gym, unless she asks of her
            # diary ("¿qué tengo en el diario hoy?").
            or (
                day is not None
                and has(said, *WHATS_MINE)
                and not has(said, *DIARY_WORDS)
            )
            or next_one
        )
        if not asks:
            return None
        if "list_my_bookings" not in results:
            return self._unavailable("list_my_bookings", offered) or self._call(
                "list_my_bookings", {}
            )
        result = results["list_my_bookings"][-1]
        if result.get("status") not in ("ok", "no_results"):
            return self._failure(result), []
        bookings = result.get("bookings", [])
        if day is not None:
            bookings = [b for b in bookings if _when(b)[:10] == day.isoformat()]
            if not bookings:
                return self._t(
                    f"No tienes ninguna clase reservada el {day.isoformat()}.",
                    f"You have no class booked on {day.isoformat()}.",
                ), []
        if not bookings:
            return self._t(
                "No tienes ninguna reserva de clases por venir.",
                "You have no bookings of classes to come.",
            ), []
        if next_one:
            soonest = min(bookings, key=_when)
            return self._t(
                f"Tu próxima clase: {soonest['class']} el {_when(soonest)} en "
                f"{soonest['room']}.",
                f"Your next class: {soonest['class']} on {_when(soonest)} in "
                f"{soonest['room']}.",
            ), []
        lines = [f"- {b['class']} {_when(b)} ({b['room']})" for b in bookings]
        return self._t("Tus reservas:", "Your bookings:") + "\n" + "\n".join(lines), []


def _class_just_told(
    earlier: Mapping[str, dict[str, Any]], before: Mapping[str, dict[str, Any]]
) -> dict[str, Any] | None:
    """The class the turn before told her of: the one it booked, else the only
    one it listed."""
    booked = earlier.get("book_class", {}).get("booking")
    listed = earlier.get("list_classes", {}).get("sessions", [])
    if "book_class" in before and booked:
        return booked
    if "list_classes" in before and len(listed) == 1:
        return listed[0]
    return None


def _when(session: Mapping[str, Any]) -> str:
    """A session's start as the member reads it: "2026-12-01 07:30"."""
    return str(session["starts_at"])[:16].replace("T", " ")


def _at(session: Mapping[str, Any], time: tuple[int, int | None]) -> bool:
    """Whether a session starts at a time said ("a las 7" is any minute of 7)."""
    hour, minute = int(_when(session)[11:13]), int(_when(session)[14:16])
    return hour == time[0] and (time[1] is None or minute == time[1])
