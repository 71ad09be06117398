"""The offline demo model: deterministic, no network, Spanish and English.

It recognises a handful of intents in the member's last message, proposes real tool
calls through the same dispatcher as any model, and writes its answer only from the
tool results it got back: it never states a figure a tool did not return. It is the
embedded default's model and a test double, never a fake success.
"""

from __future__ import annotations

import datetime
import re
import uuid
from collections.abc import AsyncIterator, Mapping
from functools import partial
from typing import Any

from agents.providers.base import (
    AssistantStep,
    ModelRequest,
    ProviderEvent,
    StepDone,
    TextDelta,
    ToolResults,
    UserText,
)
from agents.providers.offline_words import (
    CLASS_TYPES,
    MEAL_WORDS,
    MEALS,
    MEMBERSHIP_STATES,
    STOPWORDS,
    day_named,
    has,
    ordinal_named,
    period_named,
)
from gymnasia.text import fold
from tools.types import ToolCall

#: Words of a removal that name no food.
REMOVAL_WORDS = (
    "quita",
    "borra",
    "elimina",
    "remove",
    "delete",
    "diario",
    "diary",
    "from",
    "hoy",
    "today",
)
#: How many classes a list shows; "the last one" is the last of those.
CLASSES_SHOWN = 12


class OfflineProvider:
    """A scripted model that answers from tool results, in ``language``."""

    name = "offline"

    def __init__(
        self, *, language: str = "es", today: datetime.date | None = None
    ) -> None:
        self.language = language
        self.today = today or datetime.date.today()

    def _t(self, spanish: str, english: str) -> str:
        return spanish if self.language == "es" else english

    def _meal(self, meal: str, *, in_a_sentence: bool = False) -> str:
        """A meal in the member's language: "la comida" in a sentence, "Comida"
        heading a line."""
        spanish, english = MEAL_WORDS.get(meal, (meal, meal))
        said = self._t(spanish if in_a_sentence else spanish.split()[-1], english)
        return said if in_a_sentence else said.capitalize()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        text, calls = self.respond(request)
        for start in range(0, len(text), 24):
            yield TextDelta(text[start : start + 24])
        yield StepDone(text=text, tool_calls=tuple(calls))

    # The model itself: one step from the history.

    def respond(self, request: ModelRequest) -> tuple[str, list[ToolCall]]:
        message, results, earlier = self._turn(request.history)
        offered = {spec.name for spec in request.tools}
        said = fold(message)
        for intent in (
            self._freeze,
            self._refund,
            partial(self._person, message=message),
            partial(self._cancel, earlier=earlier),
            self._bookings,
            partial(self._book, earlier=earlier),
            self._remove_food,
            self._add_food,
            self._diary,
            self._classes,
            self._membership,
            self._nutrients,
        ):
            answer = intent(said, results, offered)
            if answer is not None:
                return answer
        return (
            self._t(
                "Puedo consultar los nutrientes de los alimentos del gimnasio, tu diario "
                "de comidas, las clases y tus reservas, y tu cuota. ¿Qué necesitas?",
                "I can look up the nutrients of the gym's foods, your meal diary, the "
                "classes and your bookings, and your membership. What do you need?",
            ),
            [],
        )

    def _turn(
        self, history: tuple[Any, ...]
    ) -> tuple[str, dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]]:
        """The member's last message, the results of this turn by tool name, and
        the last result of each tool in the turns before."""
        message = ""
        results: dict[str, list[dict[str, Any]]] = {}
        earlier: dict[str, dict[str, Any]] = {}
        names: dict[str, str] = {}
        for item in history:
            if isinstance(item, UserText):
                earlier.update({name: got[-1] for name, got in results.items()})
                message, results, names = item.text, {}, {}
            elif isinstance(item, AssistantStep):
                names.update({call.id: call.name for call in item.tool_calls})
            elif isinstance(item, ToolResults):
                for result in item.results:
                    name = names.get(result.call_id, "")
                    results.setdefault(name, []).append(dict(result.payload))
        return message, results, earlier

    def _call(
        self, name: str, arguments: Mapping[str, Any], text: str = ""
    ) -> tuple[str, list[ToolCall]]:
        call_id = f"offline_{uuid.uuid4().hex[:16]}"
        return text, [ToolCall(id=call_id, name=name, arguments=dict(arguments))]

    def _unavailable(
        self, name: str, offered: set[str]
    ) -> tuple[str, list[ToolCall]] | None:
        if name in offered:
            return None
        return (
            self._t(
                "Eso no lo puedo hacer desde aquí. Si quieres, pide hablar con una persona "
                "del equipo.",
                "I cannot do that from here. If you like, ask to talk to a member of staff.",
            ),
            [],
        )

    def _failure(self, result: Mapping[str, Any]) -> str:
        status = result.get("status")
        if status == "duplicate":
            first = result.get("first") or {"status": "unknown_outcome"}
            if first.get("status") == "ok":
                return self._t(
                    "Eso ya estaba hecho; no lo he repetido.",
                    "That was already done; I did not do it again.",
                )
            return self._failure(first)
        if status == "pending_approval":
            return self._t(
                "Queda pendiente de que el equipo lo apruebe.",
                "It is waiting for the staff's approval.",
            )
        if status == "unknown_outcome":
            return self._t(
                "No sé si se ha guardado; el equipo lo comprobará.",
                "I do not know whether it was saved; the staff will check.",
            )
        if status == "unavailable":
            return self._t(
                "El servicio no está disponible ahora mismo.",
                "The service is unavailable right now.",
            )
        reasons = " ".join(
            str(r) for r in result.get("errors") or [result.get("message")] if r
        )
        if not reasons:
            return self._t("No se ha podido hacer.", "It could not be done.")
        return self._t("No se ha podido: ", "It could not be done: ") + reasons

    # Intents. Each returns None when it does not apply.

    def _nutrients(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        if not has(
            said,
            "carbohidrat",
            "hidratos",
            "calori",
            "proteina",
            "grasa",
            "carb",
            "protein",
            "fat",
            "nutrient",
        ):
            return None
        if "search_foods" not in results:
            words = [w for w in re.findall(r"[a-z]+", said) if w not in STOPWORDS]
            if not words:
                return None
            return self._unavailable("search_foods", offered) or self._call(
                "search_foods", {"query": words[-1]}
            )
        result = results["search_foods"][-1]
        if result.get("status") == "no_results":
            return self._t(
                f"No he encontrado ningún alimento que coincida con «{result.get('query')}» "
                "en el catálogo del gimnasio.",
                f"I found no food matching “{result.get('query')}” in the gym's catalog.",
            ), []
        if result.get("status") != "ok":
            return self._t(
                "No puedo consultar el catálogo de alimentos ahora mismo. ",
                "I cannot reach the food catalog right now. ",
            ) + self._failure(result), []
        lines = []
        for food in result["foods"]:
            per = food["per_100g"]
            lines.append(
                self._t(
                    f"- {food['name']}: {per['carbohydrates_g']} g de hidratos de carbono, "
                    f"{per['protein_g']} g de proteínas, {per['fat_g']} g de grasas y "
                    f"{per['kcal']} kcal por 100 g.",
                    f"- {food['name']}: {per['carbohydrates_g']} g of carbohydrates, "
                    f"{per['protein_g']} g of protein, {per['fat_g']} g of fat and "
                    f"{per['kcal']} kcal per 100 g.",
                )
            )
        head = self._t(
            "Según el catálogo del gimnasio:", "According to the gym's catalog:"
        )
        return head + "\n" + "\n".join(lines), []

    def _diary(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        if not has(said, "diario", "he comido", "diary", "did i eat", "have i eaten"):
            return None
        if "get_meal_diary" not in results:
            day = day_named(said, self.today) or self.today
            return self._unavailable("get_meal_diary", offered) or self._call(
                "get_meal_diary", {"date": day.isoformat()}
            )
        result = results["get_meal_diary"][-1]
        if result.get("status") == "no_results":
            return self._t(
                "No hay nada anotado ese día.", "Nothing is logged that day."
            ), []
        if result.get("status") != "ok":
            return self._failure(result), []
        lines = [
            f"- {self._meal(e['meal'])}: {e['food']}, {e['grams']} g ({e['kcal']} kcal)"
            for e in result["entries"]
        ]
        total = result["totals"]["kcal"]
        return (
            self._t(
                f"Tu diario del {result['date']}:", f"Your diary for {result['date']}:"
            )
            + "\n"
            + "\n".join(lines)
            + "\n"
            + self._t(f"Total: {total} kcal.", f"Total: {total} kcal."),
            [],
        )

    def _remove_food(
        self, said: str, results: dict[str, Any], offered: set[str]
    ) -> Any:
        """A food taken out of the diary ("quita el arroz de mi diario"): the day's
        last entry of that food, or of the meal named, looked up first; a food
        named otherwise than in the diary ("chicken") is looked up in the catalog."""
        if not has(said, "quita", "borra", "elimina", "remove", "delete"):
            return None
        if has(said, "reserva", "clase", "booking", "class"):
            return None
        day = day_named(said, self.today) or self.today
        if "get_meal_diary" not in results:
            return self._unavailable("remove_meal_entry", offered) or self._call(
                "get_meal_diary", {"date": day.isoformat()}
            )
        entries = results["get_meal_diary"][-1].get("entries", [])
        words = [
            w
            for w in re.findall(r"[a-z]+", said)
            if len(w) > 2
            and w not in STOPWORDS
            and w not in MEALS
            and not has(w, *REMOVAL_WORDS)
        ]
        meal = next((MEALS[w] for w in MEALS if has(said, w)), None)
        found = {
            food["food_id"]
            for got in results.get("search_foods", [])
            for food in got.get("foods", [])
        }
        chosen = [
            e
            for e in entries
            if any(w in fold(e["food"]).split() for w in words)
            or e["food_id"] in found
            or (meal and e["meal"] == meal)
        ]
        if not chosen and words and "search_foods" not in results:
            return self._call("search_foods", {"query": words[0]})
        if "remove_meal_entry" not in results:
            if not chosen:
                return self._t(
                    "No encuentro eso en tu diario de ese día.",
                    "I cannot find that in your diary for that day.",
                ), []
            return self._call("remove_meal_entry", {"entry_id": chosen[-1]["entry_id"]})
        result = results["remove_meal_entry"][-1]
        if result.get("status") == "ok":
            removed = result["removed"]
            meal_said = self._meal(removed["meal"], in_a_sentence=True)
            return self._t(
                f"Quitado: {removed['grams']} g de {removed['food']} de {meal_said} "
                f"del {removed['date']}.",
                f"Removed: {removed['grams']} g of {removed['food']} from {meal_said} "
                f"on {removed['date']}.",
            ), []
        return self._failure(result), []

    def _add_food(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        # The sign is kept: "-50 g" is refused as such, never logged as 50 g.
        grams = re.search(r"(-?\d+(?:[.,]\d+)?)\s*(?:g\b|gr|gramos|grams)", said)
        if not (has(said, "anade", "apunta", "anota", "add", "log") and grams):
            return None
        meal = next((MEALS[w] for w in MEALS if has(said, w)), "snack")
        if "search_foods" not in results:
            after = said[grams.end() :]
            words = [w for w in re.findall(r"[a-z]+", after) if w not in STOPWORDS]
            words = [
                w
                for w in words
                if w not in MEALS and w not in ("al", "a", "to", "my", "mi")
            ]
            if not words:
                return None
            return self._unavailable("add_food_to_meal", offered) or self._call(
                "search_foods", {"query": words[0]}
            )
        found = results["search_foods"][-1]
        if found.get("status") != "ok":
            return self._t(
                "No he encontrado ese alimento en el catálogo.",
                "I could not find that food in the catalog.",
            ), []
        if "add_food_to_meal" not in results:
            food = found["foods"][0]
            return self._call(
                "add_food_to_meal",
                {
                    "date": (day_named(said, self.today) or self.today).isoformat(),
                    "meal": meal,
                    "food_id": food["food_id"],
                    "grams": float(grams.group(1).replace(",", ".")),
                },
            )
        result = results["add_food_to_meal"][-1]
        if result.get("status") == "ok":
            entry = result["entry"]
            meal = self._meal(entry["meal"], in_a_sentence=True)
            return self._t(
                f"Anotado: {entry['grams']} g de {entry['food']} en {meal} "
                f"del {entry['date']}.",
                f"Logged: {entry['grams']} g of {entry['food']} for {meal} "
                f"on {entry['date']}.",
            ), []
        return self._failure(result), []

    def _classes(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        if not has(said, "clase", "horario", "class", "schedule"):
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
            kind = next((c for c in CLASS_TYPES if c in said), None)
            if kind:
                arguments["class_type"] = kind
            return self._unavailable("list_classes", offered) or self._call(
                "list_classes", arguments
            )
        result = results["list_classes"][-1]
        if result.get("status") != "ok":
            return (
                self._t(
                    "No hay clases programadas esos días.",
                    "No classes are scheduled then.",
                )
                if result.get("status") == "no_results"
                else self._failure(result)
            ), []
        lines = [
            f"- {s['class']} {s['starts_at'][:16].replace('T', ' ')} ({s['room']}, "
            + self._t(
                f"{s['places_left']} plazas libres)", f"{s['places_left']} places left)"
            )
            for s in result["sessions"][:CLASSES_SHOWN]
        ]
        return self._t("Clases:", "Classes:") + "\n" + "\n".join(lines), []

    def _book(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
    ) -> Any:
        if not has(said, "reserva", "apuntame", "book"):
            return None
        if has(said, "cancela", "cancel", "anula"):
            return None
        kind = next((c for c in CLASS_TYPES if c in said), None)
        day = day_named(said, self.today)
        place = ordinal_named(said)
        shown = earlier.get("list_classes", {}).get("sessions", [])[:CLASSES_SHOWN]
        if place is not None and not (day or kind) and shown:
            # "Book the first one" after a list of classes: that list's one.
            listed = {"sessions": shown}
        elif "list_classes" not in results:
            arguments: dict[str, Any] = {
                "date_from": (day or self.today).isoformat(),
                "date_to": (day or self.today).isoformat(),
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
            sessions = [s for s in sessions if s["places_left"] > 0]
            if not sessions:
                return self._t(
                    "No hay plazas libres en esa clase ese día.",
                    "There are no free places in that class that day.",
                ), []
            return self._unavailable("book_class", offered) or self._call(
                "book_class", {"session_id": sessions[0]["session_id"]}
            )
        result = results["book_class"][-1]
        if result.get("status") == "ok":
            booking = result["booking"]
            return self._t(
                f"Reserva confirmada: {booking['class']} el "
                f"{booking['starts_at'][:16].replace('T', ' ')} en {booking['room']}.",
                f"Booking confirmed: {booking['class']} on "
                f"{booking['starts_at'][:16].replace('T', ' ')} in {booking['room']}.",
            ), []
        return self._failure(result), []

    def _cancel(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
    ) -> Any:
        if not (
            has(said, "cancela", "anula", "cancel")
            and has(said, "reserva", "clase", "booking", "class")
        ):
            return None
        if "list_my_bookings" not in results:
            return self._unavailable("cancel_booking", offered) or self._call(
                "list_my_bookings", {}
            )
        bookings = results["list_my_bookings"][-1].get("bookings", [])
        kind = next((c for c in CLASS_TYPES if c in said), None)
        chosen = [b for b in bookings if not kind or fold(b["class"]) == kind]
        booked = earlier.get("book_class", {}).get("booking", {}).get("booking_id")
        if has(said, "esa", "esta", "that", "this") and booked is not None:
            # "Cancel that booking" right after one was made: that one.
            chosen = [b for b in bookings if b["booking_id"] == booked]
        if "cancel_booking" not in results:
            if not chosen:
                return self._t(
                    "No tienes reservas que cancelar.", "You have no booking to cancel."
                ), []
            return self._call("cancel_booking", {"booking_id": chosen[0]["booking_id"]})
        result = results["cancel_booking"][-1]
        if result.get("status") == "ok":
            return self._t("Reserva cancelada.", "Booking cancelled."), []
        return self._failure(result), []

    def _bookings(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        """The member's bookings, asked about ("¿qué tengo reservado?"): a question,
        never a request to book."""
        asks = has(said, "mis reserva", "my booking", "reservad", "booked") or (
            has(said, "tengo", "have") and has(said, "reserva", "booking")
        )
        if not asks:
            return None
        if "list_my_bookings" not in results:
            return self._unavailable("list_my_bookings", offered) or self._call(
                "list_my_bookings", {}
            )
        result = results["list_my_bookings"][-1]
        if result.get("status") == "no_results":
            return self._t(
                "No tienes ninguna reserva de clases por venir.",
                "You have no bookings of classes to come.",
            ), []
        if result.get("status") != "ok":
            return self._failure(result), []
        lines = [
            f"- {b['class']} {b['starts_at'][:16].replace('T', ' ')} ({b['room']})"
            for b in result["bookings"]
        ]
        return self._t("Tus reservas:", "Your bookings:") + "\n" + "\n".join(lines), []

    def _membership(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        if not has(said, "cuota", "membresia", "abono", "membership"):
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
        return self._t(
            f"Tu cuota «{m['plan']}» está {state} y termina el {m['ends_on']}.",
            f"Your membership “{m['plan']}” is {state} and ends on {m['ends_on']}.",
        ), []

    def _freeze(self, said: str, results: dict[str, Any], offered: set[str]) -> Any:
        if not has(said, "congel", "pausa", "freeze", "pause"):
            return None
        if "freeze_membership" not in results:
            period = period_named(said, self.today)
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
            said, "persona", "humano", "alguien del equipo", "person", "human", "staff"
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
