"""The demo model's ground: what it reads of a conversation, what a rule answers,
and the words every family says.

A rule sees only what a real model sees: the member's last message, the results
of the calls it made in this turn, the last result of each tool in earlier turns,
the tools offered (names and schemas), and the state it kept in its own earlier
steps (``provider_state["offline"]``, echoed back like a provider's reasoning
state): which rule a step belongs to and, on a question, what it asked.
"""

from __future__ import annotations

import datetime
import json
import re
import unicodedata
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils.formats import localize
from django.utils.translation import gettext as _

from agents.providers.base import AssistantStep, HistoryItem, ToolResults, UserText
from gymnasia.refusals import refusals_said
from gymnasia.when import when_written
from tools.types import ToolCall, ToolSpec

#: The key of the demo model's own state in a step's ``provider_state``.
STATE = "offline"


def fold(text: str) -> str:
    """Lower-case, accent-free, one space between words: what phrases match."""
    bare = unicodedata.normalize("NFKD", text.replace("\u2019", "'"))
    bare = "".join(ch for ch in bare if not unicodedata.combining(ch))
    return " ".join(
        re.sub(r"[¿?¡!«»\"()]|[.,;:](?=\s|$)", " ", bare.casefold()).split()
    )


def said_any(said: str, *patterns: str) -> bool:
    """Whether the folded message has any of ``patterns`` (regexes, whole words)."""
    return any(re.search(rf"\b(?:{p})\b", said) for p in patterns)


#: Words that tell a message's language, folded (words both share are left out).
SPANISH_WORDS = frozenset(
    "que de del la el los las mi mis tengo tiene hay cuantos cuantas cuanto quiero y "
    "en por para con un una si hola gracias clases clase reserva reservas apuntame "
    "congela congelar cuota como va hoy manana he comido hablar persona cancela "
    "otros otra solicitud membresia desde hasta al es puedes".split()
)
ENGLISH_WORDS = frozenset(
    "the my what how do i is have has of for to an book log freeze cancel classes "
    "class yes thanks thank you many much carbs want talk person please from today "
    "tomorrow did am are can which other another membership request eaten".split()
)


def message_language(text: str, default: str) -> str:
    """The language a message is written in, "es" or "en", by its words (Spanish
    punctuation and accents count double); ``default`` when it does not tell."""
    said = fold(text).split()
    spanish = sum(word in SPANISH_WORDS for word in said)
    spanish += 2 * bool(re.search(r"[¿¡ñáéíóú]", text.casefold()))
    english = sum(word in ENGLISH_WORDS for word in said)
    if spanish == english:
        return default
    return "es" if spanish > english else "en"


#: Places in a list, as said: "la primera", "the second", "la última".
PLACES = {
    r"primer[ao]?|first|1st": 0,
    r"segund[ao]|second|2nd": 1,
    r"tercer[ao]?|third|3rd": 2,
    r"cuart[ao]|fourth|4th": 3,
    r"ultim[ao]|last": -1,
}


def by_place(said: str, items: list[Any]) -> Any | None:
    """The item of a list the message points at by its place in it."""
    for words, index in PLACES.items():
        if said_any(said, words) and -len(items) <= index < len(items):
            return items[index]
    return None


@dataclass(frozen=True)
class Reply:
    """One step: its text, the calls it proposes, and what it keeps for later."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    state: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Turn:
    """What a rule reads: the message, the thread and the tools offered."""

    text: str
    said: str
    #: The calls of this turn so far and their results: (tool, arguments, result).
    done: list[tuple[str, dict[str, Any], dict[str, Any]]]
    #: The state of this turn's last step (which rule it belongs to).
    state: dict[str, Any]
    #: The state of the last turn's reply: the question it asked, if any.
    asked: dict[str, Any]
    #: The last (arguments, result) of each tool in the turns before this one.
    earlier: dict[str, tuple[dict[str, Any], dict[str, Any]]]
    offered: dict[str, ToolSpec]
    today: datetime.date
    visitor: bool
    contact: str
    #: Whether the rule is read as the answer to the question it asked.
    answering: bool = False
    #: A visitor on WhatsApp is known by the number they write from.
    on_whatsapp: bool = False

    def result(self, tool: str) -> dict[str, Any] | None:
        """The last result of ``tool`` in this turn."""
        found = [got for name, _args, got in self.done if name == tool]
        return found[-1] if found else None

    def call(
        self, rule: str, tool: str, arguments: Mapping[str, Any], **keep: Any
    ) -> Reply:
        """A step proposing one call of ``tool``, or why it cannot be made."""
        if tool not in self.offered:
            return Reply(self.not_offered())
        call = ToolCall(
            id=f"offline_{uuid.uuid4().hex[:16]}", name=tool, arguments=dict(arguments)
        )
        return Reply(calls=(call,), state={"rule": rule, **keep})

    def not_offered(self) -> str:
        """A tool this conversation is not offered: a visitor is asked to sign in
        (member tools are never offered to one), anyone else is told where to turn."""
        if self.visitor and self.on_whatsapp:
            return _(
                "For that I need to know who you are: ask the gym to add this "
                "number to your member record, then write to me again."
            )
        if self.visitor:
            return _(
                "For that I need to know who you are: sign in on the gym's website "
                "and ask me again."
            )
        return _("I cannot do that from here.") + " " + self.a_person()

    def a_person(self) -> str:
        """Where a person can be reached: a handoff when offered, else the gym."""
        if "handoff_to_staff" in self.offered:
            return _("If you like, ask to talk to a member of staff.")
        if self.contact:
            return _("You can contact the gym: %(contact)s") % {"contact": self.contact}
        return _("You can contact the gym directly.")

    def takes(self, tool: str, argument: str) -> bool:
        """Whether the tool offered has ``argument`` in its schema."""
        spec = self.offered.get(tool)
        return spec is not None and argument in spec.parameters.get("properties", {})


@dataclass
class Thread:
    """What the history holds for the next step."""

    message: str = ""
    #: Where the reply before the last message is: what it asked is worked out
    #: again from the history before it (the model is deterministic).
    asked_at: int | None = None
    earlier: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(
        default_factory=dict
    )
    done: list[tuple[str, dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    #: The state of this turn's last step that made calls.
    state: dict[str, Any] = field(default_factory=dict)
    #: Whether this turn already replied: a request staff reviewed is then told
    #: from its result alone.
    replied: bool = False


def read_history(history: tuple[HistoryItem, ...]) -> Thread:
    thread, reply_at = Thread(), None
    calls: dict[str, ToolCall] = {}
    for index, item in enumerate(history):
        if isinstance(item, UserText):
            thread.earlier.update({name: (a, got) for name, a, got in thread.done})
            thread.asked_at = reply_at
            thread.message, thread.done, thread.state = item.text, [], {}
            thread.replied = False
        elif isinstance(item, AssistantStep):
            calls.update({call.id: call for call in item.tool_calls})
            if item.tool_calls:
                thread.state = dict(item.provider_state.get(STATE) or {})
            else:
                reply_at, thread.replied = index, True
        elif isinstance(item, ToolResults):
            for result in item.results:
                if (call := calls.get(result.call_id)) is not None:
                    got = (call.name, arguments_of(call), dict(result.payload))
                    thread.done.append(got)
    return thread


def last_message(history: tuple[HistoryItem, ...]) -> str:
    """The member's last message in the history ("" before any)."""
    texts = [item.text for item in history if isinstance(item, UserText)]
    return texts[-1] if texts else ""


def arguments_of(call: ToolCall) -> dict[str, Any]:
    """A call's arguments as a dict, whatever form the history kept them in."""
    arguments: Any = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError:
            return {}
    return dict(arguments) if isinstance(arguments, Mapping) else {}


def figure(value: Any) -> str:
    """A figure a tool returned, with the decimal mark of the active language."""
    return str(localize(value))


def when(starts_at: Any) -> str:
    """A class's start as the member reads it, at the clock the tool gave it:
    «martes 1 de diciembre, 07:30» (the tool's ISO moment is the model's data)."""
    try:
        moment = datetime.datetime.fromisoformat(str(starts_at))
    except ValueError:
        return str(starts_at)[:16].replace("T", " ")
    if moment.tzinfo is None:
        return when_written(moment.date(), weekday=True) + f", {moment:%H:%M}"
    return when_written(moment, zone=moment.tzinfo)


def day_written(day: Any) -> str:
    """A day a tool gave (ISO) as the member reads it: «7 de diciembre»."""
    try:
        return when_written(datetime.date.fromisoformat(str(day)[:10]))
    except ValueError:
        return str(day)


def days_written(start: Any, end: Any) -> str:
    """Days a tool gave (ISO), both included, with their preposition: «del 1 al
    10 de agosto», "from 1 to 10 August"."""
    try:
        first, last = (datetime.date.fromisoformat(str(d)[:10]) for d in (start, end))
    except ValueError:
        return _("from %(first)s to %(last)s") % {"first": start, "last": end}
    return when_written(first, last)


def outcome(
    result: Mapping[str, Any], done: Callable[[Mapping[str, Any]], str], waits: str
) -> str:
    """What a write's result means: ``done`` of a success, ``waits`` while staff
    decide, a refusal's reasons from its codes; a duplicate told as its first call."""
    status = result.get("status")
    if status == "duplicate":
        first = result.get("first") or {"status": "unknown_outcome"}
        if first.get("status") == "ok":
            return (
                _("That was already done; I did not do it again.") + " " + done(first)
            )
        if first.get("status") == "pending_approval":
            return _("You had already asked for it.") + " " + waits
        return outcome(first, done, waits)
    if status == "ok":
        return done(result)
    if status == "pending_approval":
        return waits
    if status == "unknown_outcome":
        return _("I do not know whether it was saved; the staff will check.")
    if status == "unavailable":
        return _("The service is unavailable right now.")
    if status == "failed":
        return _("It failed; nothing was changed.")
    # Why, alone: R10's sentence in front already says it was not done.
    return refusals_said(result.get("refusals"))


def read_failed(result: Mapping[str, Any]) -> str:
    """A read that did not answer: said honestly, never as "nothing found"."""
    if result.get("status") == "unavailable":
        return _("The service is unavailable right now.")
    return _("I could not look it up: %(why)s") % {
        "why": refusals_said(result.get("refusals"))
    }


@dataclass(frozen=True)
class Rule:
    """A rule of the demo model: when it applies, and what it does then.

    ``applies`` reads the folded message; ``answers`` (a question's name)
    makes it the reader of the answer to that question of its own, tried before
    every other rule. ``step`` proposes the next call or writes the reply,
    from the turn's results so far.
    """

    name: str
    step: Callable[[Turn], Reply | None]
    applies: Callable[[str], bool] = lambda said: False
    answers: str = ""
