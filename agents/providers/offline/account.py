"""The offline demo model's intents about the member's account: the membership
and how her requests stand, her payments and a refund, leaving the gym, and
talking to a person. Freezing the membership is in ``freezes``."""

from __future__ import annotations

import re
from typing import Any

from agents.providers.offline.base import Intents
from agents.providers.offline.freezes import HOW_IT_STANDS, asks_about_freezes
from agents.providers.offline.words import (
    MEMBERSHIP_STATES,
    asks_for,
    asks_how,
    has,
    kind_named,
)
from gymnasia.text import fold

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
            or asks_about_freezes(said)
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
        elif asks_about_freezes(said) and not requested:
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
        ) + (person if "handoff_to_staff" in offered else self._a_person(offered)), []

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
        if "handoff_to_staff" not in offered:
            return self._reach_the_gym(), []
        if "handoff_to_staff" not in results:
            return self._call(
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
