"""The offline demo model's intents about the member's bookings: listing them,
cancelling one, moving one, and what she is told of the class just talked about."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from agents.providers.offline.base import Intents, when_of
from agents.providers.offline.words import (
    CANCEL_WORDS,
    EVERY,
    asks_for,
    asks_how,
    day_named,
    has,
    hesitates,
    kind_named,
    ordinal_named,
)
from gymnasia.text import fold

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

#: Questions of the class just talked about: when and where it is (whole words:
#: "¿dónde estáis?" asks where the gym is)...
WHEN_WHERE = re.compile(
    r"\b(a que hora (es|era|sera|empieza|empezaba)|cuando es|que sala|donde es"
    r"|when is it"
    r"|when does it start|what time does|which room|what room|where is it)\b"
)
#: ...and who teaches it.
WHO_TEACHES = (
    "quien da",
    "quien la da",
    "quien imparte",
    "monitor",
    "profesor",
    "who teaches",
    "who is teaching",
    "who's teaching",
    "instructor",
    "teacher",
)


class BookingIntents(Intents):
    def _about_the_class(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
        before: Mapping[str, dict[str, Any]],
        shown: list[dict[str, Any]],
    ) -> Any:
        """ "¿A qué hora es?", "¿en qué sala?", "¿quién da la clase?" right after a
        booking, or a list of one class: that class's time, room or instructor,
        from what the tool said of it."""
        teaches = has(said, *WHO_TEACHES)
        if not (teaches or WHEN_WHERE.search(said)):
            return None
        session = _class_just_told(earlier, before, shown)
        if session is None:
            return None
        if teaches:
            if not session.get("instructor"):
                return self._t(
                    "El gimnasio no ha indicado quién da esa clase.",
                    "The gym has not said who teaches that class.",
                ), []
            return self._t(
                f"{session['class']} del {when_of(session)} la da "
                f"{session['instructor']}.",
                f"{session['instructor']} teaches {session['class']} on "
                f"{when_of(session)}.",
            ), []
        return self._t(
            f"{session['class']} es el {when_of(session)} en {session['room']}.",
            f"{session['class']} is on {when_of(session)} in {session['room']}.",
        ), []

    def _cannot_go(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
        before: Mapping[str, dict[str, Any]],
        shown: list[dict[str, Any]],
    ) -> Any:
        """ "Al final no puedo ir", "¿cancelo la de pilates o mejor no?": never a
        cancellation on a guess; how to ask for one, naming the class she was
        just told of (booked, or listed as hers)."""
        if not (
            has(said, *CANNOT_GO) or (hesitates(said) and has(said, *CANCEL_WORDS))
        ):
            return None
        unavailable = self._unavailable("cancel_booking", offered)
        if unavailable is not None:
            return unavailable
        booking = _class_just_told(earlier, before, shown)
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
        kind, day = fold(booking["class"]), when_of(booking)[:10]
        return self._t(
            f"Si quieres cancelar tu plaza en {booking['class']} el {when_of(booking)}, "
            f"dime «cancela mi reserva de {kind} del {day}».",
            f"If you want to cancel your place in {booking['class']} on "
            f'{when_of(booking)}, say "cancel my {kind} booking on {day}".',
        ), []

    def _cancel(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
        before: Mapping[str, dict[str, Any]],
        shown: list[dict[str, Any]],
    ) -> Any:
        kind = kind_named(said)
        # "Cancela la del martes": a booking named by its day.
        of_a_day = has(said, "cancela", "anula", "cancel") and day_named(
            said, self.today
        )
        booked = earlier.get("book_class", {}).get("booking", {}).get("booking_id")
        # "Cancélala", "cancel it": the booking last made, or the only one last
        # listed, or her place in the only class last listed, when that is what
        # she was last told of.
        listed = earlier.get("list_my_bookings", {}).get("bookings", [])
        told = _class_just_told(earlier, before, shown)
        meant: tuple[str, Any] | None = None  # the key of the booking, and its value
        if "book_class" in before:
            meant = ("booking_id", booked) if booked is not None else None
        elif "list_my_bookings" in before and len(listed) == 1:
            meant = ("booking_id", listed[0]["booking_id"])
        elif told is not None and told.get("member_booked"):
            meant = ("session_id", told["session_id"])
        it = meant is not None and has(said, "cancelala", "anulala", "cancel it")
        # "La de las dos" is a class at two, not both of them.
        every = has(said, *EVERY) and not re.search(r"\bde las dos\b", said)
        if not (
            asks_for(said, *CANCEL_WORDS)
            and (
                has(said, "reserva", "clase", "booking", "class")
                or kind
                or of_a_day
                or it
                # "Cancela las dos" right after her bookings were talked about.
                or (every and ("book_class" in before or "list_my_bookings" in before))
            )
        ):
            return None
        that = it or has(said, "esa", "esta", "that", "this")
        if every:
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
            and (not day or when_of(b)[:10] == day.isoformat())
        ]
        place = ordinal_named(said)
        if place is not None and chosen and "cancel_booking" not in results:
            # "Cancel my second booking": of the bookings, soonest first.
            if not -len(chosen) <= place < len(chosen):
                return self._t(
                    "No tienes tantas reservas.", "You do not have that many bookings."
                ), []
            chosen = [chosen[place]]
        if it and meant is not None:
            key, value = meant
            chosen = [b for b in bookings if b[key] == value]
        elif that and booked is not None:
            # "Cancel that booking" right after one was made: that one.
            chosen = [b for b in bookings if b["booking_id"] == booked]
        if "cancel_booking" not in results:
            if not chosen and bookings and (kind or day):
                # "Cancela la del viernes" with bookings on other days only.
                return self._none_booked(kind, day), []
            if not chosen:
                return self._t(
                    "No tienes reservas que cancelar.", "You have no booking to cancel."
                ), []
            if len(chosen) > 1:  # never a guess: the member says which
                return self._which_booking(chosen), []
            return self._call("cancel_booking", {"booking_id": chosen[0]["booking_id"]})
        return self._cancelled_told(results["cancel_booking"][-1]), []

    def _booking_taken_back(
        self, booking: Mapping[str, Any], results: dict[str, Any], offered: set[str]
    ) -> Any:
        """The booking just made, cancelled ("deshaz eso")."""
        if "cancel_booking" not in results:
            return self._unavailable("cancel_booking", offered) or self._call(
                "cancel_booking", {"booking_id": booking["booking_id"]}
            )
        return self._cancelled_told(results["cancel_booking"][-1]), []

    def _none_booked(self, kind: str | None, day: datetime.date | None) -> str:
        """None of her bookings is of the kind or on the day said."""
        es_kind = f" de {kind}" if kind else ""
        en_kind = f" {kind}" if kind else ""
        es_day = f" el {day.isoformat()}" if day else ""
        en_day = f" on {day.isoformat()}" if day else ""
        return self._t(
            f"No tienes ninguna reserva{es_kind}{es_day}.",
            f"You have no{en_kind} booking{en_day}.",
        )

    def _cancelled_told(self, result: Mapping[str, Any]) -> str:
        if result.get("status") == "ok":
            # Which class: "cancel it" may not be the one she thinks.
            booking = result["booking"]
            return self._t(
                f"Reserva cancelada: {booking['class']} el {when_of(booking)}.",
                f"Booking cancelled: {booking['class']} on {when_of(booking)}.",
            )
        return self._failure(result)

    def _which_booking(self, bookings: list[dict[str, Any]]) -> str:
        """Several bookings could be meant: which one, and how to say it (with its
        day when another of the same class is listed)."""
        listed = ", ".join(f"{b['class']} {when_of(b)}" for b in bookings[:5])
        first = bookings[0]
        kind = fold(first["class"])
        day = when_of(first)[:10]
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
            bookings = [b for b in bookings if when_of(b)[:10] == day.isoformat()]
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
            soonest = min(bookings, key=when_of)
            return self._t(
                f"Tu próxima clase: {soonest['class']} el {when_of(soonest)} en "
                f"{soonest['room']}.",
                f"Your next class: {soonest['class']} on {when_of(soonest)} in "
                f"{soonest['room']}.",
            ), []
        lines = [f"- {b['class']} {when_of(b)} ({b['room']})" for b in bookings]
        return self._t("Tus reservas:", "Your bookings:") + "\n" + "\n".join(lines), []


def _class_just_told(
    earlier: Mapping[str, dict[str, Any]],
    before: Mapping[str, dict[str, Any]],
    shown: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """The class the turn before told her of: the one it booked, else the only
    one its list showed."""
    booked = earlier.get("book_class", {}).get("booking")
    if "book_class" in before and booked:
        return booked
    if "list_classes" in before and len(shown) == 1:
        return shown[0]
    return None
