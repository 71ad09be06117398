"""The offline demo model's intent of freezing the membership: the days asked
for, said back when only a length or a question gave them, and asked of staff."""

from __future__ import annotations

import datetime
import re
from typing import Any

from agents.providers.offline.base import Intents
from agents.providers.offline.periods import (
    DAYS_OF_MONTH,
    days_without_month,
    month_of,
    period_named,
    period_of_a_length,
)
from agents.providers.offline.words import (
    ISO_DATE,
    TAKE_AWAY,
    agrees,
    asks_for,
    asks_how,
    has,
)
from gymnasia.text import fold

#: Words of what else a message with days may be about.
OTHER_SUBJECTS = (
    "clase",
    "class",
    "reserva",
    "book",
    "diario",
    "diary",
    "pago",
    "payment",
    "que ",
    "what",
)
#: Words that ask for a freeze.
FREEZE_WORDS = ("congel", "pausa", "freeze", "pause")
#: Words that undo a freeze or withdraw its request ("cancela la congelación").
UNDO = (
    "cancela",
    "anula",
    "retira",
    "descongel",
    "cancel",
    "withdraw",
    "unfreeze",
    "undo",
    *TAKE_AWAY,
)

#: Words that ask how a request stands ("¿han aprobado mi congelación?").
HOW_IT_STANDS = (
    "aprobad",
    "aprueba",
    "como va",
    "estado",
    "novedad",
    "que pasa",
    "que ha pasado",
    "revisad",
    "approv",
    "how is",
    "how's",
    "status",
    "news",
    "what happened",
    "reviewed",
)


class FreezeIntents(Intents):
    def _freeze(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        previous: str = "",
        before_previous: str = "",
    ) -> Any:
        """A freeze asked for, with its days, or the days asked for; ``previous``:
        the member's message before, whose freeze she may be giving the days of
        ("From January 5 to January 19" after «which days?»), or saying yes to
        the days its length made ("two weeks from January 5": the 5th to the
        18th?); ``before_previous``: the one before it, when she said no to
        those days and is giving others."""
        previous, before_previous = fold(previous), fold(before_previous)
        proposed = _proposed_days(previous, self.today)
        days_asked = (
            _asked_for_the_days(previous, self.today)
            or bool(
                NO.fullmatch(previous) and _proposed_days(before_previous, self.today)
            )
            # «¿Del 3 al 17 de qué mes?»
            or (
                days_without_month(previous)
                and _asked_for_the_days(before_previous, self.today)
            )
        )
        given = None  # the days of her answer to the question of which days
        if days_asked and not has(said, *OTHER_SUBJECTS):
            given = self._days_given(said, previous, before_previous)
            if given is None and days_without_month(said):
                first, last, *_ = DAYS_OF_MONTH.findall(said)
                return self._t(
                    f"¿Del {first} al {last} de qué mes?",
                    f"The {first} to the {last} of which month?",
                ), []
        if proposed is not None and NO.fullmatch(said):
            return self._t(
                "De acuerdo: no lo pido. Si quieres congelarla otros días, dímelos.",
                "All right: I will not ask for it. If you want to freeze it on "
                "other days, tell me which.",
            ), []
        if not (
            asks_for(said, *FREEZE_WORDS)
            # Days of another question ("¿qué clases hay del 5 al 10?") are none.
            or given is not None
            or (proposed is not None and agrees(said))
        ):
            return None
        if has(said, *UNDO) and "freeze_membership" not in results:
            # No tool undoes a freeze or withdraws a request: never a new freeze.
            return self._freeze_not_undone(offered), []
        period = proposed if agrees(said) else given or period_named(said, self.today)
        if "freeze_membership" not in results:
            if period is None and asks_about_freezes(said):
                return None  # a question about her freezes, for _membership
            if period is not None and period is not proposed and _a_length_only(said):
                # "Dos semanas desde el 5 de enero": those days, said back to her
                # before anything is asked of staff; "2 semanas en agosto": which?
                days = _proposed_days(said, self.today)
                if days is not None:
                    return self._t(
                        f"¿Del {days[0]} al {days[1]}? Si es así, dime «sí» y lo "
                        "pido; si no, dime los días.",
                        f'From {days[0]} to {days[1]}? If so, say "yes" and I '
                        "will ask for it; if not, tell me the days.",
                    ), []
                period = None
            elif period is not None and period is not proposed and given is None:
                # "¿Puedo congelar la cuota en marzo?" asks whether she can: a
                # request she could not withdraw waits for her yes.
                days = _proposed_days(said, self.today)
                if days is not None:
                    return self._t(
                        "Puedo pedírselo al equipo: ¿del "
                        f"{days[0]} al {days[1]}? Si es así, dime «sí»; si no, "
                        "dime los días.",
                        "I can ask the staff for it: from "
                        f'{days[0]} to {days[1]}? If so, say "yes"; if not, tell '
                        "me the days.",
                    ), []
            if period is None:
                return self._t(
                    "¿Desde qué día y hasta qué día quieres congelar la cuota?",
                    "From which day to which day do you want to freeze it?",
                ), []
            start, end = period
            return self._unavailable("freeze_membership", offered) or self._call(
                "freeze_membership",
                {"start": start.isoformat(), "end": end.isoformat()},
            )
        result = results["freeze_membership"][-1]
        if result.get("status") == "ok":
            freeze = result["freeze"]
            return self._t(
                f"Cuota congelada del {freeze['start']} al {freeze['end']}.",
                f"Membership frozen from {freeze['start']} to {freeze['end']}.",
            ), []
        if result.get("status") == "pending_approval" and period is not None:
            start, end = period
            return self._t(
                f"La congelación del {start} al {end} queda pendiente de que el "
                "equipo la apruebe.",
                f"The freeze from {start} to {end} is waiting for the staff's "
                "approval.",
            ), []
        return self._failure(result), []

    def _days_given(
        self, said: str, previous: str, before_previous: str
    ) -> tuple[datetime.date, datetime.date] | None:
        """The days a (folded) answer to the question of which days gives: said
        whole, or without their month, which her request said ("next month"),
        or the month alone after days without one ("de enero")."""
        if days_without_month(previous) and not DAYS_OF_MONTH.search(said):
            return period_named(previous, self.today, month_of(said, self.today))
        month = month_of(previous, self.today) or month_of(before_previous, self.today)
        return period_named(said, self.today, month)

    def _freeze_not_undone(self, offered: set[str]) -> str:
        return self._t(
            "No puedo anular una congelación ni retirar una solicitud desde aquí.",
            "I cannot undo a freeze or withdraw a request from here.",
        ) + self._a_person(offered)


def _asked_for_the_days(said: str, today: datetime.date) -> bool:
    """Whether a (folded) message asked for a freeze without its days, so that it
    was answered with the question of which days."""
    return (
        has(said, *FREEZE_WORDS)
        and not has(said, *UNDO)
        and not asks_about_freezes(said)
        and (period_named(said, today) is None or _a_length_only(said))
    )


#: A plain no ("no", "no, gracias").
NO = re.compile(r"\W*(?:no|nope)(?:\W+(?:gracias|thanks))?\W*")


def _proposed_days(
    said: str, today: datetime.date
) -> tuple[datetime.date, datetime.date] | None:
    """The days of a (folded) freeze request said by its length and one day
    ("two weeks from January 5"), or of one asked about ("¿puedo congelar la
    cuota en marzo?"), which are said back to her to agree to."""
    if not has(said, *FREEZE_WORDS) or has(said, *UNDO):
        return None
    if _a_length_only(said):
        return period_of_a_length(said, today)
    return period_named(said, today) if asks_how(said) else None


def asks_about_freezes(said: str) -> bool:
    """Whether a (folded) message asks about the membership's freezes ("¿tengo
    alguna congelación?", "is my membership frozen?") rather than for one
    ("tengo que congelar la cuota" asks for one)."""
    if not has(said, "congel", "freeze", "frozen") or has(said, "tengo que"):
        return False
    return has(
        said,
        "tengo",
        "tiene",
        "hay ",
        "alguna",
        "esta congelad",
        "do i have",
        "is my",
        "is it",
        "are there",
        "any ",
        *HOW_IT_STANDS,
    )


def _a_length_only(said: str) -> bool:
    """Whether a (folded) freeze request says how long ("2 semanas en agosto")
    without saying which days: the whole month would be a guess."""
    if not has(said, "semana", "week", "quincena", "fortnight", "dias", "days"):
        return False
    days = DAYS_OF_MONTH.findall(ISO_DATE.sub("", said))
    return len(days) < 2 and len(ISO_DATE.findall(said)) < 2
