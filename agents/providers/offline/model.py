"""The offline demo model: deterministic, no network, Spanish and English.

It reads the member's last message, proposes real tool calls through the same
dispatcher as any model, and writes its reply only from the results it got
back. Its rules are tried in this order, the first that applies answering:

1. the answer to the question it asked last (``Rule.answers``): "¿Desde qué
   día…?" → "desde el lunes que viene" is that answer, never a new subject;
2. the families' rules, in the order of ``ORDER``: a person, requests, a freeze
   and the membership before the diary and the classes, whose words are wider
   ("apúntame" logs a food only with grams or a meal, else books a class);
3. small talk: thanks, or what this conversation's tools allow.

Within a turn, each step belongs to the rule that made the first call (kept in
the step's own state), so a search then a booking stays one rule's work. A
request staff reviewed is told from its result alone.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import override

from agents.providers.base import (
    ModelRequest,
    ProviderEvent,
    StepDone,
    TextDelta,
    Usage,
)
from agents.providers.offline import account, classes, freeze, nutrition
from agents.providers.offline.core import (
    STATE,
    Reply,
    Turn,
    fold,
    last_message,
    message_language,
    outcome,
    read_history,
)
from agents.providers.offline.dates import NoSuchDate

__all__ = ["OfflineProvider"]

#: Every rule by name; ``ORDER`` is the order they are tried in (see above).
BY_NAME = {
    rule.name: rule
    for rule in (*freeze.RULES, *account.RULES, *nutrition.RULES, *classes.RULES)
}
ORDER = (
    # Answers to its own questions first.
    "days",
    "confirm",
    "log",
    "which_class",
    # A person, her requests and a freeze before the membership ("congela mi
    # cuota" names both), the diary before the classes ("apúntame 100 g…").
    "person",
    "requests",
    "freeze",
    "membership",
    "again",
    "diary",
    "mine",
    "cancel",
    "book",
    "classes",
    "nutrients",
    "another_food",
)
RULES = tuple(BY_NAME[name] for name in ORDER)
#: How many replies back it reads its own questions: a question asked again
#: (a date that does not exist) still carries what the first one knew.
MEMORY = 6
#: How a write's result is told with nothing but that result (a request staff
#: reviewed comes back after the turn's reply).
TOLD = {
    "freeze_membership": lambda result, args: freeze.frozen(result, args),
    "book_class": lambda result, args: classes.booked(result, {}),
    "add_food_to_meal": lambda result, args: nutrition.logged(result),
}


def _told(result: dict[str, Any], args: dict[str, Any]) -> str:
    return outcome(result, lambda got: _("Your request has been done."), "")


class OfflineProvider:
    """A scripted model that answers from tool results, in ``language``."""

    name = "offline"

    def __init__(
        self,
        *,
        language: str = "es",
        today: datetime.date | None = None,
        visitor: bool = False,
        contact: str = "",
        on_whatsapp: bool = False,
    ) -> None:
        self.language = language
        self.today = today or datetime.date.today()
        self.visitor = visitor
        self.contact = contact.strip()
        self.on_whatsapp = on_whatsapp

    def reply(self, request: ModelRequest, depth: int = 0) -> Reply:
        """The step's reply; a day no calendar has is told as such, whichever
        rule read it."""
        try:
            return self.respond(request, depth)
        except NoSuchDate as wrong:
            return Reply(
                _("The date %(date)s does not exist.") % {"date": wrong.written}
            )

    async def stream(
        self, request: ModelRequest
    ) -> AsyncGenerator[ProviderEvent, None]:
        # It answers in the language of the message it read, else the
        # conversation's.
        with override(message_language(last_message(request.history), self.language)):
            reply = self.reply(request)
        for start in range(0, len(reply.text), 24):
            yield TextDelta(reply.text[start : start + 24])
        # Nothing is billed: the demo model costs nothing.
        yield StepDone(
            text=reply.text,
            tool_calls=reply.calls,
            provider_state={STATE: dict(reply.state)},
            usage=Usage(),
        )

    def respond(self, request: ModelRequest, depth: int = 0) -> Reply:
        thread = read_history(request.history)
        if thread.replied and thread.done:
            tool, args, result = thread.done[-1]
            return Reply(TOLD.get(tool, _told)(result, args))
        asked: dict[str, Any] = {}
        if thread.asked_at is not None and depth < MEMORY:
            before = replace(request, history=request.history[: thread.asked_at])
            asked = dict(self.reply(before, depth + 1).state)
        turn = Turn(
            text=thread.message,
            said=fold(thread.message),
            done=thread.done,
            state=thread.state,
            asked=asked,
            earlier=thread.earlier,
            offered={spec.name: spec for spec in request.tools},
            today=self.today,
            visitor=self.visitor,
            contact=self.contact,
            on_whatsapp=self.on_whatsapp,
        )
        if thread.done and (rule := BY_NAME.get(thread.state.get("rule", ""))):
            return rule.step(turn) or Reply()
        return _first_answer(turn)


def _first_answer(turn: Turn) -> Reply:
    """The first rule's reply: the answer to its own question first."""
    question = turn.asked.get("asked") or turn.asked.get("rule")
    for rule in RULES:
        if rule.answers and rule.answers == question:
            turn.answering = True
            if (reply := rule.step(turn)) is not None:
                return reply
            turn.answering = False
    for rule in (*RULES, account.LAST):
        if rule.applies(turn.said) and (reply := rule.step(turn)) is not None:
            return reply
    return Reply()
