"""What every intent of the offline demo model uses: its language and today, the
words it says them in, and how it proposes a call or tells why one failed."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Mapping
from typing import Any

from django.utils.translation import override

from agents.providers.offline.words import MEAL_WORDS
from gymnasia.refusals import refusals_said
from tools.registry import published_registry
from tools.types import ToolCall


class Intents:
    """The demo model's shared ground; each group of intents builds on it."""

    def __init__(
        self,
        *,
        language: str = "es",
        today: datetime.date | None = None,
        visitor: bool = False,
        contact: str = "",
    ) -> None:
        self.language = language
        self.today = today or datetime.date.today()
        #: Talking to an anonymous visitor, who is offered no member tool (R3).
        self.visitor = visitor
        #: How to reach the gym, as its owner wrote it ("" when not given).
        self.contact = contact.strip()

    def _t(self, spanish: str, english: str) -> str:
        return spanish if self.language == "es" else english

    def _n(self, figure: Any) -> str:
        """A figure a tool returned, written as the member writes it: "2,7" in
        Spanish, "2.7" in English. The figure itself is never changed."""
        written = str(figure)
        return written.replace(".", ",") if self.language == "es" else written

    def _meal(self, meal: str, *, in_a_sentence: bool = False) -> str:
        """A meal in the member's language: "la comida" in a sentence, "Comida"
        heading a line."""
        spanish, english = MEAL_WORDS.get(meal, (meal, meal))
        said = self._t(spanish if in_a_sentence else spanish.split()[-1], english)
        return said if in_a_sentence else said.capitalize()

    def _to_meal(self, meal: str) -> str:
        """A meal after "to": "al desayuno" ("a" and "el" make one word), "a la
        comida"; in English, "to my breakfast"."""
        said = self._meal(meal, in_a_sentence=True)
        if self.language != "es":
            return f"to my {said}"
        return (
            "al " + said.removeprefix("el ") if said.startswith("el ") else "a " + said
        )

    def _of_meal(self, meal: str) -> str:
        """A meal after "of": "del desayuno" ("de" and "el" make one word), "de la
        comida"; in English, the meal's name."""
        said = self._meal(meal, in_a_sentence=True)
        if self.language != "es":
            return said
        return (
            "del " + said.removeprefix("el ")
            if said.startswith("el ")
            else "de " + said
        )

    def _call(
        self, name: str, arguments: Mapping[str, Any], text: str = ""
    ) -> tuple[str, list[ToolCall]]:
        return self._calls([(name, arguments)], text)

    def _calls(
        self, calls: list[tuple[str, Mapping[str, Any]]], text: str = ""
    ) -> tuple[str, list[ToolCall]]:
        """One step proposing ``calls`` (tool name, arguments), all at once."""
        return text, [
            ToolCall(
                id=f"offline_{uuid.uuid4().hex[:16]}", name=name, arguments=dict(args)
            )
            for name, args in calls
        ]

    def _listed(self, items: list[str]) -> str:
        """ "A, B y C", "A, B and C"."""
        *first, last = items
        return f"{', '.join(first)} {self._t('y', 'and')} {last}" if first else last

    def _unavailable(
        self, name: str, offered: set[str]
    ) -> tuple[str, list[ToolCall]] | None:
        if name in offered:
            return None
        tool = published_registry().get(name)
        if self.visitor and tool is not None and tool.needs_member:
            return (
                self._t(
                    "Para eso necesito saber quién eres: entra con tu cuenta en la web "
                    "del gimnasio y vuelve a preguntármelo.",
                    "For that I need to know who you are: sign in on the gym's website "
                    "and ask me again.",
                ),
                [],
            )
        return (
            self._t("Eso no lo puedo hacer desde aquí.", "I cannot do that from here.")
            + self._a_person(offered),
            [],
        )

    def _a_person(self, offered: set[str]) -> str:
        """Where she can turn to a person, after a sentence: to the staff through
        a handoff when one is offered, else to the gym itself, never asking for
        what she cannot have here."""
        if "handoff_to_staff" in offered:
            return self._t(
                " Si quieres, pide hablar con una persona del equipo.",
                " If you like, ask to talk to a member of staff.",
            )
        if self.contact:
            return self._t(
                f" Puedes contactar con el gimnasio: {self.contact}",
                f" You can contact the gym: {self.contact}",
            )
        return self._t(
            " Puedes contactar directamente con el gimnasio.",
            " You can contact the gym directly.",
        )

    def _reach_the_gym(self) -> str:
        """A person asked for where no handoff is offered: how to reach the gym
        (its contact details when the owner gave them), never that a person
        will answer here."""
        return self._t(
            "Desde aquí no puedo pasarte con una persona del equipo.",
            "I cannot pass you to a member of staff from here.",
        ) + self._a_person(set())

    def _failure(self, result: Mapping[str, Any], *, undone: bool = False) -> str:
        """What a result that is not a plain success means for her; ``undone``:
        a duplicate whose first call's effect a later call took away."""
        status = result.get("status")
        if status == "duplicate":
            first = result.get("first") or {"status": "unknown_outcome"}
            if first.get("status") == "ok" and undone:
                # R7 answers the repeat with the first call, whose effect is gone:
                # never "already done" for what she no longer has.
                return self._t(
                    "No lo he hecho: lo mismo se hizo y se deshizo hace un momento, "
                    "y durante diez minutos no puedo repetirlo igual desde aquí. "
                    "Vuelve a pedírmelo más tarde, o pide hablar con una persona "
                    "del equipo.",
                    "I have not done it: the same was done and undone a moment ago, "
                    "and for ten minutes I cannot do it again the same way from "
                    "here. Ask me again later, or ask to talk to a member of staff.",
                )
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
        if status == "failed":
            return self._t(
                "Ha fallado; no se ha cambiado nada.", "It failed; nothing was changed."
            )
        # Told from the refusals' codes, in her words; the English reasons
        # beside them are the model's, and never translated back.
        refusals = result.get("refusals")
        if not refusals:
            return self._t("No se ha podido hacer.", "It could not be done.")
        with override(self.language):
            said = refusals_said(refusals)
        return self._t("No se ha podido: ", "It could not be done: ") + said


#: A write, and the write that takes its effect away: (undoing tool, the key of
#: what the first made, the key of what the second took, their id's key).
UNDONE_BY = {
    "book_class": ("cancel_booking", "booking", "booking", "booking_id"),
    "add_food_to_meal": ("remove_meal_entry", "entry", "removed", "entry_id"),
}


def undone_since(
    tool: str, result: Mapping[str, Any], earlier: Mapping[str, dict[str, Any]]
) -> bool:
    """Whether ``result`` of ``tool`` is a duplicate whose first call's effect the
    last undoing call of the conversation took away (a booking cancelled, a diary
    entry removed)."""
    undoing, made, taken, key = UNDONE_BY[tool]
    undo = earlier.get(undoing)
    if result.get("status") != "duplicate" or not undo or undo.get("status") != "ok":
        return False
    made_id = ((result.get("first") or {}).get(made) or {}).get(key)
    return made_id is not None and made_id == (undo.get(taken) or {}).get(key)


def when_of(session: Mapping[str, Any]) -> str:
    """A class's start as the member reads it: "2026-12-01 07:30"."""
    return str(session["starts_at"])[:16].replace("T", " ")
