"""The offline demo model: deterministic, no network, Spanish and English.

It recognises a handful of intents in the member's last message, proposes real tool
calls through the same dispatcher as any model, and writes its answer only from the
tool results it got back: it never states a figure a tool did not return. It is the
embedded default's model and a test double, never a fake success.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import AsyncGenerator, Mapping
from functools import partial
from typing import Any, NamedTuple

from agents.providers.base import (
    AssistantStep,
    ModelRequest,
    ProviderEvent,
    StepDone,
    TextDelta,
    ToolResults,
    Usage,
    UserText,
)
from agents.providers.offline.account import AccountIntents
from agents.providers.offline.bookings import BookingIntents
from agents.providers.offline.classes import ClassIntents, shown_of
from agents.providers.offline.diary import DiaryIntents, just_logged
from agents.providers.offline.food_log import FoodLogIntents, logged_once, request_of
from agents.providers.offline.freezes import FREEZE_WORDS, FreezeIntents
from agents.providers.offline.hours import time_named
from agents.providers.offline.nutrients import NutrientIntents
from agents.providers.offline.requests import RequestIntents
from agents.providers.offline.words import (
    GRAMS,
    asks_nutrients,
    day_named,
    day_of,
    declines,
    has,
    impossible_date,
    kind_named,
    week_days_named,
)
from gymnasia.text import fold
from tools.types import ToolCall

__all__ = ["OfflineProvider"]


#: What a conversation's tools let the demo model help with, in the order it
#: says them: (any of these tools, Spanish, English).
TOPICS = (
    (
        {"search_foods"},
        "los nutrientes de los alimentos del gimnasio",
        "the nutrients of the gym's foods",
    ),
    (
        {"get_meal_diary", "add_food_to_meal", "remove_meal_entry"},
        "tu diario de comidas",
        "your meal diary",
    ),
    ({"list_classes"}, "las clases", "the classes"),
    (
        {"list_my_bookings", "book_class", "cancel_booking"},
        "tus reservas",
        "your bookings",
    ),
    ({"get_membership", "freeze_membership"}, "tu cuota", "your membership"),
    ({"list_payments", "refund_payment"}, "tus pagos", "your payments"),
    ({"list_my_requests"}, "tus solicitudes al equipo", "your requests to the staff"),
)


#: Words that ask to take back the change just made.
UNDO = re.compile(r"\b(?:deshaz|deshazlo|deshacer|deshacerlo|undo)\b")

#: Questions about the gym itself, its opening hours or where it is, which no
#: tool answers ("¿abre los domingos?", "where is the gym?").
GYM_INFO = re.compile(
    r"\b(abre|abris|abren|abrimos|cierra|cerrais|cierran|apertura|direccion"
    r"|donde esta el gimnasio|donde estais|open|opens|opening|close|closes|closing"
    r"|address|where is the gym|where are you)\b"
)
#: A goodbye ("adiós", "hasta luego", "bye").
GOODBYE = re.compile(
    r"\b(adios|hasta luego|hasta pronto|hasta manana|chao|chau|nos vemos|bye"
    r"|goodbye|see you)\b"
)
#: A message that opens with a greeting ("hola", "buenos días", "good morning").
GREETING = re.compile(
    r"(\W*(hola|buenas( tardes| noches)?|buenos dias|hi|hello|hey"
    r"|good (morning|afternoon|evening)))+\b"
)


class OfflineProvider(
    RequestIntents,
    AccountIntents,
    FreezeIntents,
    BookingIntents,
    ClassIntents,
    DiaryIntents,
    FoodLogIntents,
    NutrientIntents,
):
    """A scripted model that answers from tool results, in ``language``."""

    name = "offline"

    async def stream(
        self, request: ModelRequest
    ) -> AsyncGenerator[ProviderEvent, None]:
        text, calls = self.respond(request)
        for start in range(0, len(text), 24):
            yield TextDelta(text[start : start + 24])
        # Nothing is billed: the demo model costs nothing.
        yield StepDone(text=text, tool_calls=tuple(calls), usage=Usage())

    def respond(self, request: ModelRequest) -> tuple[str, list[ToolCall]]:
        heard = _heard(_as_if_answered_then(request.history))
        results, earlier, before = heard.results, heard.earlier, heard.before
        message, previous = heard.message, heard.previous
        offered = {spec.name for spec in request.tools}
        said = fold(message)
        # "Hola, ¿cuántas calorías tiene el té?": the question is what follows.
        greeted = GREETING.match(said)
        if greeted and (rest := said[greeted.end() :].lstrip(" ,.;:!¡")).strip("?¿"):
            said = rest
        if not results and declines(said):
            return self._t(
                "De acuerdo: no cambio nada.", "All right: I will not change anything."
            ), []
        impossible = impossible_date(said)
        if impossible is not None:
            return self._t(
                f"La fecha {impossible} no existe. Dímela de nuevo, por ejemplo "
                "«2027-03-01».",
                f"The date {impossible} does not exist. Tell me again, for example "
                '"2027-03-01".',
            ), []
        if GYM_INFO.search(said) and not (
            kind_named(said) or has(said, "clase", "class", "reserva", "booking")
        ):
            return self._gym_info(offered), []
        # The classes the last list showed her, which "la primera" points at.
        shown = shown_of(
            earlier.get("list_classes"),
            *heard.asked.get("list_classes", ("", "")),
            self.today,
            booked=heard.booked_then.get("list_classes"),
        )
        for intent in (
            partial(self._undo, just=heard.just),
            self._requests,
            partial(
                self._freeze,
                previous=previous,
                before_previous=heard.before_previous,
            ),
            self._refund,
            self._payments,
            partial(self._person, message=message),
            self._leave,
            partial(self._cancel, earlier=earlier, before=before, shown=shown),
            partial(self._cannot_go, earlier=earlier, before=before, shown=shown),
            self._move,
            partial(self._about_the_class, earlier=earlier, before=before, shown=shown),
            self._bookings,
            partial(self._book, earlier=earlier, before=before, shown=shown),
            partial(self._remove_food, just=heard.just),
            self._change_entry,
            partial(
                self._add_food,
                earlier=earlier,
                previous=previous,
                logged=logged_once(heard.just),
            ),
            self._diary,
            partial(
                self._classes,
                before=before,
                previous=fold(previous),
                booked=_booking_made(before, heard.just),
            ),
            self._membership,
            partial(self._nutrients, message=message),
        ):
            answer = intent(said, results, offered)
            if answer is not None:
                return answer
        if GOODBYE.search(said):
            # Before "hasta mañana" is taken for a question about tomorrow.
            return self._t("¡Hasta pronto!", "Goodbye!"), []
        answer = self._follow_up(
            said,
            results,
            offered,
            before,
            earlier,
            previous,
            heard.before_previous,
            heard.just,
            message=message,
        )
        if answer is not None:
            return answer
        if has(said, "gracias", "thank"):
            return self._t(
                "¡De nada! ¿Algo más?", "You are welcome! Anything else?"
            ), []
        answer = self._what_i_can_do(offered)
        if greeted:
            answer = self._t("¡Hola! ", "Hello! ") + answer
        return answer, []

    def _undo(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        just: dict[str, list[dict[str, Any]]],
    ) -> Any:
        """ "Deshaz eso", "undo that": the change the turn before made, taken
        back (the foods it logged taken out, the class it booked cancelled);
        nothing on a guess when it made none of those."""
        if not UNDO.search(said):
            return None
        if has(said, *FREEZE_WORDS) or "freeze_membership" in just:
            # No tool undoes a freeze or withdraws its request.
            return self._freeze_not_undone(offered), []
        logged = just_logged(just)
        if logged:
            return self._entries_taken_back(logged, results, offered)
        booked = [
            got["booking"]
            for got in just.get("book_class", [])
            if got.get("status") == "ok"
        ]
        if booked:
            return self._booking_taken_back(booked[-1], results, offered)
        return self._t(
            "Solo puedo deshacer una comida que acabo de anotar o una clase que "
            "acabo de reservar.",
            "I can only undo a food I have just logged or a class I have just booked.",
        ), []

    def _gym_info(self, offered: set[str]) -> str:
        """The gym's opening hours or address: no tool says them."""
        answer = self._t(
            "Eso no lo sé desde aquí: no tengo el horario ni la dirección del "
            "gimnasio.",
            "I cannot tell from here: I do not have the gym's opening hours or "
            "address.",
        )
        return answer + self._a_person(offered)

    def _what_i_can_do(self, offered: set[str]) -> str:
        """What the tools offered in this conversation let it help with: a visitor
        is not promised her diary, nor anyone a tool the gym has turned off."""
        topics = [
            self._t(spanish, english)
            for tools, spanish, english in TOPICS
            if tools & offered
        ]
        if not topics:
            return self._t(
                "Ahora mismo no puedo consultar nada del gimnasio.",
                "Right now I cannot look anything up at the gym.",
            )
        listed = self._listed(topics)
        answer = self._t(
            f"Puedo ayudarte con {listed}.", f"I can help you with {listed}."
        )
        if "handoff_to_staff" in offered:
            answer += self._t(
                " También puedo pasarte con una persona del equipo.",
                " I can also pass you to a member of staff.",
            )
        return answer + self._t(" ¿Qué necesitas?", " What do you need?")

    def _follow_up(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        before: dict[str, dict[str, Any]],
        earlier: dict[str, dict[str, Any]],
        previous: str,
        before_previous: str,
        just: dict[str, list[dict[str, Any]]],
        message: str = "",
    ) -> Any:
        """ "¿Y el sábado?", "¿y ayer?": the question of the turn before (the
        classes, the diary), asked again for the day named; the same kind of
        class when it goes on from it ("y …", "what about …"). "Y 200 g de
        arroz": another food for the meal just logged. "¿Cuántas calorías son?"
        after her diary: that diary's totals; after foods logged: theirs. "El blanco" after being asked
        which food to log: that one, logged as she asked before. "¿Y el arroz?"
        after a food's nutrients: the rice's. "Y también el de las 19:00" after
        a booking: that class too."""
        answer = self._food_chosen(
            said,
            results,
            offered,
            before,
            earlier,
            request_of(previous, before_previous),
        ) or self._grams_given(said, results, offered, earlier, previous)
        if answer is not None:
            return answer
        goes_on = re.match(r"\W*(y|and|what about|how about|que tal)\b", said)
        if "add_food_to_meal" in before and goes_on and GRAMS.search(said):
            return self._add_food(
                said, results, offered, earlier, like=before["add_food_to_meal"]
            )
        logged = just_logged(just)
        if "add_food_to_meal" in before and logged and asks_nutrients(said):
            return self._logged_nutrients(said, results, offered, logged)
        if "get_meal_diary" in before and asks_nutrients(said):
            day = day_of(before["get_meal_diary"])
            return self._diary(said, results, offered, again=True, day=day)
        if re.fullmatch(r"\W*(y|and)\s+(ahora|now)\W*", said):
            # "¿Y ahora?" after her diary changed (or was read): that day's, again.
            day = _diary_day(before, earlier)
            if day is not None:
                return self._diary(said, results, offered, again=True, day=day)
        booked = earlier.get("book_class", {}).get("booking")
        if "book_class" in before and booked and goes_on and time_named(said):
            # "Y también el de las 19:00" right after a booking: another class.
            return self._book(
                said, results, offered, earlier, before, shown=[], like=booked
            )
        if "list_classes" in before and goes_on and time_named(said):
            # "¿Y en la de las 19:00?" after a list, or the places left in it.
            return self._classes(
                said,
                results,
                offered,
                like=before["list_classes"],
                previous=fold(previous),
            )
        if day_named(said, self.today) is None:
            if "list_classes" in before and week_days_named(said, self.today):
                # "¿Y la semana que viene?" after a list: the same, that week.
                like = before["list_classes"] if goes_on else {}
                return self._classes(
                    said, results, offered, like=like, previous=fold(previous)
                )
            asked_of_a_food = set(before) == {"search_foods"}  # not a food logged
            if asked_of_a_food and goes_on and not has(said, "gracias", "thank"):
                # "¿Y el arroz?", "and in 150 g of rice?" after a food's nutrients.
                return self._nutrients(
                    said, results, offered, again=True, message=message
                )
            return None
        if "list_classes" in before:
            like = before["list_classes"] if goes_on else {}
            return self._classes(
                said, results, offered, like=like, previous=fold(previous)
            )
        if "get_meal_diary" in before:
            return self._diary(said, results, offered, again=True)
        return None


def _as_if_answered_then(history: tuple[Any, ...]) -> tuple[Any, ...]:
    """Which of the member's messages a result told later answers.

    A request staff reviewed comes back as the last step of a real history, in
    the order things happened (``agents.turn.turn_continue``): after the reply to
    her last message ("gracias", say, written while it waited). A language model
    reads that whole history and is told the last result is what to tell; this
    scripted one answers one message at a time, so it reads the history as the
    turn that asked would have, had the result come then: its call and result
    after that turn's own steps. Nothing is stored this way. The turn that asked
    is the last whose call of that tool waited for approval (a step's results
    follow it in the history)."""
    if len(history) < 3 or not isinstance(history[-1], ToolResults):
        return history
    step, reply = history[-2], history[-3]
    if not (
        isinstance(step, AssistantStep)
        and isinstance(reply, AssistantStep)
        and not reply.tool_calls
    ):
        return history
    tools = {call.name for call in step.tool_calls}
    for index in range(len(history) - 4, 0, -1):
        asked, results = history[index - 1], history[index]
        if not (isinstance(asked, AssistantStep) and isinstance(results, ToolResults)):
            continue
        names = {call.id: call.name for call in asked.tool_calls}
        if any(
            names.get(result.call_id) in tools and result.status == "pending_approval"
            for result in results.results
        ):
            return (*history[: index + 1], *history[-2:])
    return history


class Heard(NamedTuple):
    """What the demo model reads of a conversation's history."""

    #: The member's last message.
    message: str
    #: The results of this turn so far, by tool name, in the order they came.
    results: dict[str, list[dict[str, Any]]]
    #: The last result of each tool in the turns before.
    earlier: dict[str, dict[str, Any]]
    #: The arguments of each tool the last turn before that called any called.
    before: dict[str, dict[str, Any]]
    #: That turn's results, by tool name (what "deshaz eso" takes back).
    just: dict[str, list[dict[str, Any]]]
    #: The member's message before the last, and the one before that.
    previous: str
    before_previous: str
    #: The member's message each of ``earlier``'s results answered, with the one
    #: said before it.
    asked: dict[str, tuple[str, str]]
    #: For each of ``earlier``'s results, the booking the turn before its own made
    #: (listing nothing): a question of places left naming no class asks of it.
    booked_then: dict[str, dict[str, Any]]


def _heard(history: tuple[Any, ...]) -> Heard:
    message = previous = before_previous = ""
    results: dict[str, list[dict[str, Any]]] = {}
    just: dict[str, list[dict[str, Any]]] = {}
    earlier: dict[str, dict[str, Any]] = {}
    names: dict[str, str] = {}
    called: dict[str, dict[str, Any]] = {}
    before: dict[str, dict[str, Any]] = {}
    asked: dict[str, tuple[str, str]] = {}
    booked_then: dict[str, dict[str, Any]] = {}
    for item in history:
        if isinstance(item, UserText):
            earlier.update({name: got[-1] for name, got in results.items()})
            asked.update({name: (previous, message) for name in results})
            booking = _booking_made(before, just)
            for name in results:
                if booking:
                    booked_then[name] = booking
                else:
                    booked_then.pop(name, None)
            # A turn that called nothing ("gracias") leaves the subject as is.
            if called:
                before, just = called, results
            before_previous, previous, message = previous, message, item.text
            results, names, called = {}, {}, {}
        elif isinstance(item, AssistantStep):
            names.update({call.id: call.name for call in item.tool_calls})
            called.update(
                {call.name: _arguments(call.arguments) for call in item.tool_calls}
            )
        elif isinstance(item, ToolResults):
            for result in item.results:
                name = names.get(result.call_id, "")
                results.setdefault(name, []).append(dict(result.payload))
    return Heard(
        message,
        results,
        earlier,
        before,
        just,
        previous,
        before_previous,
        asked,
        booked_then,
    )


def _booking_made(
    called: Mapping[str, Any], results: Mapping[str, list[dict[str, Any]]]
) -> dict[str, Any] | None:
    """The class a turn (its tools ``called`` and their ``results``) booked, when
    it listed none ("reserva la primera"): what a question of places after it
    asks of."""
    if "book_class" in called and "list_classes" not in called:
        booking: dict[str, Any] | None = results.get("book_class", [{}])[-1].get(
            "booking"
        )
        return booking
    return None


def _arguments(arguments: Any) -> dict[str, Any]:
    """A call's arguments as a dict, whatever form the history kept them in."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError:
            return {}
    return dict(arguments) if isinstance(arguments, dict) else {}


def _diary_day(
    before: dict[str, dict[str, Any]], earlier: dict[str, dict[str, Any]]
) -> datetime.date | None:
    """The day of the diary the turn before logged in, took out of, or read."""
    if "remove_meal_entry" in before:
        removed = earlier.get("remove_meal_entry", {}).get("removed", {})
        return day_of(removed)
    return day_of(before.get("add_food_to_meal") or before.get("get_meal_diary"))
