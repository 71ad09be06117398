"""The offline demo model's intents about the member's account: the membership,
freezing it, a refund, and talking to a person."""

from __future__ import annotations

import re
from typing import Any

from agents.providers.offline.base import Intents
from agents.providers.offline.words import (
    MEMBERSHIP_STATES,
    asks_how,
    has,
    period_named,
)


class AccountIntents(Intents):
    def _membership(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        if not (
            has(said, "cuota", "membresia", "abono", "membership")
            or _asks_about_freezes(said)
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
        if freezes:
            periods = ", ".join(
                self._t(
                    f"del {f['start']} al {f['end']}", f"{f['start']} to {f['end']}"
                )
                for f in freezes
            )
            answer += self._t(f" Congelaciones: {periods}.", f" Freezes: {periods}.")
        elif _asks_about_freezes(said):
            answer += self._t(" No tiene ninguna congelación.", " It has no freeze.")
        return answer, []

    def _freeze(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        if not has(said, "congel", "pausa", "freeze", "pause"):
            return None
        if "freeze_membership" not in results:
            period = period_named(said, self.today)
            if period is None and _asks_about_freezes(said):
                return None  # a question about her freezes, for _membership
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
        return self._failure(result), []

    def _refund(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        if not has(said, "devolu", "reembols", "devuelve", "refund"):
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
            payments = [p for p in listed.get("payments", []) if p["refundable"] > 0]
            if not payments:
                return self._t(
                    "No encuentro pagos que se puedan devolver.",
                    "I find no payment that can be refunded.",
                ), []
            amount = re.search(r"(\d+(?:[.,]\d{1,2})?)\s*(?:€|eur|euros?)", said)
            value = (
                float(amount.group(1).replace(",", "."))
                if amount
                else payments[0]["refundable"]
            )
            return self._call(
                "refund_payment",
                {"payment_id": payments[0]["payment_id"], "amount": value},
            )
        result = results["refund_payment"][-1]
        if result.get("status") == "ok":
            refund = result["refund"]
            return self._t(
                f"Devolución hecha: {refund['amount']} {refund['currency']}.",
                f"Refund made: {refund['amount']} {refund['currency']}.",
            ), []
        return self._failure(result), []

    def _person(
        self, said: str, results: dict[str, Any], offered: set[str], message: str
    ) -> Any:
        """A person asked for; the reason staff read is the member's own words."""
        if not has(
            said,
            "persona",
            "humano",
            "alguien del equipo",
            "hablar con alguien",
            "person",
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
    )
