"""The offline demo model's intents about the member's account: the membership,
freezing it, a refund, and talking to a person."""

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
    MEMBERSHIP_STATES,
    TAKE_AWAY,
    agrees,
    asks_for,
    asks_how,
    has,
    kind_named,
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


#: Words that ask to leave the gym ("quiero darme de baja").
LEAVE = (
    "darme de baja",
    "dar de baja",
    "dame de baja",
    "de baja del gimnasio",
    "cancela mi cuota",
    "cancelar mi cuota",
    "anular mi cuota",
    "cancel my membership",
    "end my membership",
    "quit the gym",
    "leave the gym",
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


#: Words that ask what she has paid ("¿qué pagos he hecho?", "what did I pay?").
PAID = (
    "pagos",
    "pague",
    "he pagado",
    "cobrado",
    "cobros",
    "payments",
    "did i pay",
    "have i paid",
    "i paid",
    "charged",
    "charges",
)
#: Words that ask whether a request was approved ("¿lo han aprobado ya?").
APPROVED = ("aprobad", "aprobo", "approved")
#: How many payments a list shows.
PAYMENTS_SHOWN = 12


class AccountIntents(Intents):
    def _membership(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        # "¿Cómo va mi solicitud?": the requests she can make here wait on her
        # membership (a freeze), which lists them.
        asks_requests = (
            has(said, "solicitud", "peticion", "request") and has(said, *HOW_IT_STANDS)
        ) or has(said, *APPROVED)
        if not (
            has(said, "cuota", "membresia", "abono", "membership")
            or _asks_about_freezes(said)
            or asks_requests
        ):
            return None
        if "get_membership" not in results:
            return self._unavailable("get_membership", offered) or self._call(
                "get_membership", {}
            )
        result = results["get_membership"][-1]
        if result.get("status") != "ok":
            return self._failure(result), []
        m = result["membership"]
        state = self._t(*MEMBERSHIP_STATES.get(m["status"], (m["status"],) * 2))
        answer = self._t(
            f"Tu cuota «{m['plan']}» está {state} y termina el {m['ends_on']}.",
            f"Your membership “{m['plan']}” is {state} and ends on {m['ends_on']}.",
        )
        freezes = m.get("freezes", [])
        requested = m.get("freezes_waiting_for_approval", [])
        if freezes:
            periods = self._periods(freezes)
            answer += self._t(f" Congelaciones: {periods}.", f" Freezes: {periods}.")
        elif _asks_about_freezes(said) and not requested:
            answer += self._t(" No tiene ninguna congelación.", " It has no freeze.")
        if asks_requests and not requested:
            answer += self._t(
                " No tienes ninguna congelación esperando la aprobación del equipo.",
                " You have no freeze waiting for the staff's approval.",
            )
        if asks_requests and "refund_payment" in offered:
            # A refund waiting for staff is in no read tool's result: never "none".
            answer += self._t(
                " Los reembolsos que esperan al equipo no los veo desde aquí: su "
                "respuesta te llegará en esta conversación.",
                " Refunds waiting for the staff I cannot see from here: their answer "
                "will reach you in this conversation.",
            )
        if requested:
            periods = self._periods(requested)
            answer += self._t(
                f" Congelaciones que esperan la aprobación del equipo: {periods}.",
                f" Freezes waiting for the staff's approval: {periods}.",
            )
        return answer, []

    def _periods(self, freezes: list[dict[str, Any]]) -> str:
        return ", ".join(
            self._t(f"del {f['start']} al {f['end']}", f"{f['start']} to {f['end']}")
            for f in freezes
        )

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
            return self._freeze_not_undone(), []
        period = proposed if agrees(said) else given or period_named(said, self.today)
        if "freeze_membership" not in results:
            if period is None and _asks_about_freezes(said):
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

    def _freeze_not_undone(self) -> str:
        return self._t(
            "No puedo anular una congelación ni retirar una solicitud desde "
            "aquí. Si quieres, pide hablar con una persona del equipo.",
            "I cannot undo a freeze or withdraw a request from here. If you "
            "like, ask to talk to a member of staff.",
        )

    def _refund(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        if not asks_for(said, *ASKS_REFUND):
            return None
        if asks_how(said):
            return self._unavailable("refund_payment", offered) or (
                self._t(
                    "Sí: dime qué pago quieres que te devuelva y lo pido.",
                    "Yes: tell me which payment you want refunded and I will ask "
                    "for it.",
                ),
                [],
            )
        if "list_payments" not in results:
            return self._unavailable("refund_payment", offered) or self._call(
                "list_payments", {}
            )
        listed = results["list_payments"][-1]
        if "refund_payment" not in results:
            payments = sorted(
                (p for p in listed.get("payments", []) if p["refundable"] > 0),
                key=lambda p: p["date"],
                reverse=True,
            )
            if not payments:
                return self._t(
                    "No encuentro pagos que se puedan devolver.",
                    "I find no payment that can be refunded.",
                ), []
            chosen = _payments_meant(said, payments)
            if len(chosen) > 1:  # never a guess, least of all with money
                return self._which_payment(chosen), []
            amount = re.search(r"(\d+(?:[.,]\d{1,2})?)\s*(?:€|eur|euros?)", said)
            value = (
                float(amount.group(1).replace(",", "."))
                if amount
                else chosen[0]["refundable"]
            )
            return self._call(
                "refund_payment",
                {"payment_id": chosen[0]["payment_id"], "amount": value},
            )
        result = results["refund_payment"][-1]
        if result.get("status") == "ok":
            refund = result["refund"]
            refunded = f"{self._n(refund['amount'])} {refund['currency']}"
            return self._t(
                f"Devolución hecha: {refunded}.", f"Refund made: {refunded}."
            ), []
        return self._failure(result), []

    def _payments(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        """Her card payments, newest first, each with what was refunded of it."""
        if not has(said, *PAID):
            return None
        if "list_payments" not in results:
            return self._unavailable("list_payments", offered) or self._call(
                "list_payments", {}
            )
        result = results["list_payments"][-1]
        if result.get("status") == "no_results":
            return self._t(
                "No encuentro pagos con tarjeta tuyos.",
                "I find no card payments of yours.",
            ), []
        if result.get("status") != "ok":
            return self._failure(result), []
        payments = sorted(result["payments"], key=lambda p: p["date"], reverse=True)
        lines = []
        for p in payments[:PAYMENTS_SHOWN]:
            line = (
                f"- {p['description'] or p['payment_id']} ({p['date']}): "
                f"{self._n(p['amount'])} {p['currency']}"
            )
            if p["refunded"]:
                refunded = f"{self._n(p['refunded'])} {p['currency']}"
                line += self._t(f", devueltos {refunded}", f", {refunded} refunded")
            lines.append(line)
        more = len(payments) - PAYMENTS_SHOWN
        if more > 0:
            lines.append(self._t(f"Y {more} anteriores.", f"And {more} older ones."))
        return self._t(
            "Tus pagos con tarjeta:", "Your card payments:"
        ) + "\n" + "\n".join(lines), []

    def _which_payment(self, payments: list[dict[str, Any]]) -> str:
        """Several payments could be meant: which one, and how to say it."""
        listed = ", ".join(
            f"{p['description'] or p['payment_id']} ({p['date']}, "
            f"{self._n(p['refundable'])} {p['currency']})"
            for p in payments[:5]
        )
        named = next((p["description"] for p in payments if p["description"]), "")
        example = fold(named).split()[0] if named else "ultimo"
        return self._t(
            f"Tienes varios pagos: {listed}. ¿Cuál quieres que te devuelva? Dímelo, "
            f"por ejemplo: «devuélveme el pago de {example}».",
            f"You have several payments: {listed}. Which one shall I ask to refund? "
            f'Tell me, for example: "refund the {example} payment".',
        )

    def _leave(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        """Leaving the gym ("quiero darme de baja"): no tool ends a membership, so
        it says so and how to reach a person, who can (never the membership's
        state, as if that answered her)."""
        if not has(said, *LEAVE) or (
            # "Darme de baja de la clase de yoga" is a booking to cancel.
            has(said, "clase", "class", "reserva", "booking") or kind_named(said)
        ):
            return None
        person = self._t(
            " Si quieres, dime «quiero hablar con una persona» y se lo paso al equipo.",
            ' If you like, say "I want to talk to a person" and I will pass it to '
            "the staff.",
        )
        return self._t(
            "No puedo dar de baja la cuota desde aquí.",
            "I cannot end your membership from here.",
        ) + (person if "handoff_to_staff" in offered else ""), []

    def _person(
        self, said: str, results: dict[str, Any], offered: set[str], message: str
    ) -> Any:
        """A person asked for; the reason staff read is the member's own words."""
        if not has(
            said,
            "persona",
            "humano",
            "alguien del equipo",
            "alguien del gimnasio",
            "hablar con alguien",
            "pasame con",
            "pasarme con",
            "pasar con alguien",
            "hablar con un entrenador",
            "hablar con el entrenador",
            "hablar con el encargado",
            "person",
            "trainer",
            "coach",
            "manager",
            "human",
            "staff",
            "someone",
        ):
            return None
        if "handoff_to_staff" not in results:
            return self._unavailable("handoff_to_staff", offered) or self._call(
                "handoff_to_staff",
                {"reason": message.strip()[:200]},
            )
        result = results["handoff_to_staff"][-1]
        if result.get("status") == "ok":
            return self._t(
                "He avisado al equipo; te responderán aquí.",
                "I have told the staff; they will answer here.",
            ), []
        return self._failure(result), []


def _asked_for_the_days(said: str, today: datetime.date) -> bool:
    """Whether a (folded) message asked for a freeze without its days, so that it
    was answered with the question of which days."""
    return (
        has(said, *FREEZE_WORDS)
        and not has(said, *UNDO)
        and not _asks_about_freezes(said)
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


def _asks_about_freezes(said: str) -> bool:
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


#: Words that ask for money back ("devuélveme", "me podéis devolver…").
ASKS_REFUND = ("devolu", "devolv", "devuelv", "reembols", "refund", "money back")
#: Words of a refund request that name no payment.
REFUND_WORDS = (
    "devuel",
    "devolu",
    "devolv",
    "reembols",
    "refund",
    "pago",
    "payment",
    "quiero",
    "want",
    "please",
    "favor",
    "dinero",
    "money",
)


def _payments_meant(said: str, payments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The payments, newest first, that a (folded) refund request may mean: those
    whose description has a word said ("la toalla"); else the newest for "the
    last one"; else all of them (one payment is then the one meant)."""
    words = [
        w
        for w in re.findall(r"[a-z]+", said)
        if len(w) > 3 and not has(w, *REFUND_WORDS)
    ]
    named = [
        p for p in payments if any(w in fold(p["description"]).split() for w in words)
    ]
    if named:
        return named
    if has(said, "ultim", "last", "latest", "reciente", "most recent"):
        return payments[:1]
    return payments
