"""The offline demo model's intent of how the member's requests stand ("¿Cómo va
mi solicitud?", "¿Qué pasa con mi congelación?", "How is my request going?"):
read with ``list_my_requests`` and said back naming each request by what it is
about and its state. Without that tool, the membership answers (``account``)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import override

from agents.providers.offline.base import Intents, when_of
from agents.providers.offline.freezes import HOW_IT_STANDS
from agents.providers.offline.words import has
from tools.presentation import tool_title

#: Words that name a request, or what one may be about.
REQUEST_WORDS = ("solicitud", "peticion", "request", "congelacion", "freeze")
#: Words that ask whether a request was approved ("¿lo han aprobado ya?").
APPROVED = ("aprobad", "aprobo", "approved")

#: Each request by what it is about: (Spanish, English), filled from its facts.
ABOUT = {
    "book_class": ("reserva de {class} el {when}", "booking of {class} on {when}"),
    "cancel_booking": (
        "anular la reserva de {class} del {when}",
        "cancelling the booking of {class} on {when}",
    ),
    "freeze_membership": (
        "congelación del {start} al {end}",
        "freeze from {start} to {end}",
    ),
    "add_food_to_meal": (
        "anotar {grams} g de {food} en {meal}",
        "logging {grams} g of {food} in {meal}",
    ),
    "remove_meal_entry": (
        "quitar {food} ({grams} g) de {meal} del {date}",
        "removing {food} ({grams} g) from {meal} of {date}",
    ),
    "refund_payment": (
        "reembolso de {amount} del pago «{payment}»",
        "refund of {amount} of the payment “{payment}”",
    ),
}
#: Where each request stands.
STATES = {
    "waiting_for_staff": ("esperando al equipo", "waiting for the staff"),
    "approved": ("aprobada; se está haciendo", "approved; being done"),
    "done": ("aprobada y hecha", "approved and done"),
    "failed": (
        "aprobada, pero no se pudo hacer",
        "approved, but it could not be done",
    ),
    "outcome_unknown": (
        "aprobada; el equipo comprueba si se hizo",
        "approved; the staff are checking whether it was done",
    ),
    "rejected": ("rechazada", "rejected"),
    "expired": (
        "caducó sin que el equipo la revisara",
        "expired before the staff reviewed it",
    ),
}


class RequestIntents(Intents):
    def _requests(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        """How her requests stand, each named and with its state."""
        asks = has(said, *APPROVED) or (
            has(said, *REQUEST_WORDS) and has(said, *HOW_IT_STANDS)
        )
        if not asks or "list_my_requests" not in offered:
            return None
        if "list_my_requests" not in results:
            return self._call("list_my_requests", {})
        result = results["list_my_requests"][-1]
        if result.get("status") == "no_results":
            return self._t(
                "No tienes ninguna solicitud esperando al equipo ni decidida en "
                "los últimos 7 días.",
                "You have no request waiting for the staff or decided in the last "
                "7 days.",
            ), []
        if result.get("status") != "ok":
            return self._failure(result), []
        lines = [self._request_line(request) for request in result["requests"]]
        return self._t("Tus solicitudes:", "Your requests:") + "\n" + "\n".join(
            lines
        ), []

    def _request_line(self, request: dict[str, Any]) -> str:
        """ "- Reserva de Spinning el 2026-12-05 18:00: esperando al equipo"."""
        facts = _flat(request.get("facts") or {})
        if "meal" in facts:
            facts["meal"] = self._meal(str(facts["meal"]), in_a_sentence=True)
        for figure in ("grams", "amount"):
            if figure in facts:
                facts[figure] = self._n(facts[figure])
        if "currency" in facts:
            facts["amount"] = f"{facts['amount']} {facts['currency']}"
        template = ABOUT.get(request["tool"])
        try:
            about = self._t(*template).format(**facts) if template else None
        except KeyError:  # an id that named nothing readable
            about = None
        if about is None:
            with override(self.language):
                about = tool_title(request["tool"])
        state = self._t(*STATES.get(request["state"], STATES["failed"]))
        if request.get("reason"):
            state += f" («{request['reason']}»)"
        return f"- {about[0].upper()}{about[1:]}: {state}"


def _flat(facts: dict[str, Any]) -> dict[str, Any]:
    """A request's facts with what its ids name brought up ("class", "when");
    a payment by its description (or date) and its currency."""
    flat = {k: v for k, v in facts.items() if not isinstance(v, dict)}
    for key in ("session", "booking", "entry", "food"):
        flat.update(facts.get(key) or {})
    if "starts_at" in flat:
        flat["when"] = when_of(flat)
    if isinstance(payment := facts.get("payment"), dict):
        flat["payment"] = payment.get("description") or payment.get("date")
        flat["currency"] = payment.get("currency")
    return flat
