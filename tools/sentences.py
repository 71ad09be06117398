"""A request as one sentence in the reader's language: «Congelar la cuota del 3
al 9 de febrero de 2027», "Book Spinning on Tuesday 8 December, 19:00, with
Marta Gil", "Refund 12.50 EUR of the 40.00 EUR paid on 3 February 2027 (Towel)".

Each tool that can wait for staff (every write) has its sentence; what its ids
name is read through ``tools.naming``, dates and times are written by
``gymnasia.when.when_written`` at the gym's clock. The member's notices, the
staff's inbox and mails, the call's page and what the model is told of a request
all say it so. Where an id names nothing that can be read (deleted, another
member's, Stripe away) the request reads as its title and arguments, as given:
never a guess.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from gymnasia.gyms.models import Business, Member
from gymnasia.when import when_written
from tools.models import Handoff
from tools.naming import (
    Named,
    argument_named,
    money_written,
    quantity_written,
    request_about,
)
from tools.presentation import tool_title

#: A meal as the diary's sentences put food in it, and take it out of it.
MEAL_INTO = {
    "breakfast": gettext_lazy("for breakfast"),
    "lunch": gettext_lazy("for lunch"),
    "dinner": gettext_lazy("for dinner"),
    "snack": gettext_lazy("for a snack"),
}
MEAL_OUT_OF = {
    "breakfast": gettext_lazy("from breakfast"),
    "lunch": gettext_lazy("from lunch"),
    "dinner": gettext_lazy("from dinner"),
    "snack": gettext_lazy("from a snack"),
}


def _day(value: Any) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(str(value))
    except ValueError:
        return None


def _class_at(named: Named, business: Business) -> dict[str, str]:
    """A class's name, its day and hour at the gym, and who teaches it."""
    facts = named.facts
    starts = datetime.datetime.fromisoformat(facts["starts_at"])
    return {
        "class": facts["class"],
        "when": when_written(starts, zone=business.zone),
        "instructor": facts.get("instructor") or "",
    }


def _booking(tool: str, named: Named | None, business: Business) -> str | None:
    if named is None:
        return None
    words = _class_at(named, business)
    if tool == "book_class":
        if words["instructor"]:
            return _("Book %(class)s on %(when)s, with %(instructor)s") % words
        return _("Book %(class)s on %(when)s") % words
    if words["instructor"]:
        return _("Cancel the booking of %(class)s on %(when)s, with %(instructor)s") % (
            words
        )
    return _("Cancel the booking of %(class)s on %(when)s") % words


def _food_added(arguments: Mapping[str, Any], named: Named | None) -> str | None:
    day, meal = _day(arguments.get("date")), arguments.get("meal")
    if named is None or day is None or meal not in MEAL_INTO:
        return None
    words = {
        "grams": quantity_written(arguments.get("grams", 0)),
        "food": named.facts["food"],
        "meal": str(MEAL_INTO[meal]),
        "day": when_written(day, weekday=True),
    }
    if arguments.get("again"):
        return _("Log %(grams)s g more of %(food)s %(meal)s on %(day)s") % words
    return _("Log %(grams)s g of %(food)s %(meal)s on %(day)s") % words


def _entry_removed(named: Named | None) -> str | None:
    if named is None:
        return None
    facts = named.facts
    return _("Remove %(grams)s g of %(food)s %(meal)s on %(day)s") % {
        "grams": quantity_written(facts["grams"]),
        "food": facts["food"],
        "meal": str(MEAL_OUT_OF.get(facts["meal"], facts["meal"])),
        "day": when_written(datetime.date.fromisoformat(facts["date"]), weekday=True),
    }


def _refund(arguments: Mapping[str, Any], named: Named | None) -> str | None:
    if named is None or "amount" not in arguments:
        return None
    facts = named.facts
    words = {
        "amount": money_written(arguments["amount"], facts["currency"]),
        "paid": money_written(facts["amount"], facts["currency"]),
        "day": when_written(datetime.date.fromisoformat(facts["date"])),
        "description": facts["description"],
    }
    if float(arguments["amount"]) == float(facts["amount"]):
        sentence = _("Refund the %(paid)s paid on %(day)s") % words
    else:
        sentence = _("Refund %(amount)s of the %(paid)s paid on %(day)s") % words
    return f"{sentence} ({words['description']})" if words["description"] else sentence


def _freeze(arguments: Mapping[str, Any]) -> str | None:
    start, end = _day(arguments.get("start")), _day(arguments.get("end"))
    if start is None or end is None or end < start:
        return None
    return _("Freeze the membership %(dates)s") % {"dates": when_written(start, end)}


def request_sentence(
    *,
    business: Business,
    member: Member | None,
    tool_name: str,
    arguments: Mapping[str, Any],
) -> str:
    """A request of ``tool_name`` with ``arguments`` as one sentence, in the
    active language and at the gym's clock; what cannot be read, as its title
    and arguments (``tools.naming.request_about``)."""

    def named(argument: str) -> Named | None:
        if argument not in arguments:
            return None
        value = arguments[argument]
        return argument_named(
            business=business, member=member, name=argument, value=value
        )

    sentence: str | None = None
    if tool_name == "freeze_membership":
        sentence = _freeze(arguments)
    elif tool_name == "book_class":
        sentence = _booking(tool_name, named("session_id"), business)
    elif tool_name == "cancel_booking":
        sentence = _booking(tool_name, named("booking_id"), business)
    elif tool_name == "add_food_to_meal":
        sentence = _food_added(arguments, named("food_id"))
    elif tool_name == "remove_meal_entry":
        sentence = _entry_removed(named("entry_id"))
    elif tool_name == "refund_payment":
        sentence = _refund(arguments, named("payment_id"))
    elif tool_name == "handoff_to_staff" and arguments.get("reason"):
        sentence = _("Talk to a person: %(reason)s") % {"reason": arguments["reason"]}
    if sentence is not None:
        return sentence
    title = tool_title(tool_name)
    about = request_about(business=business, member=member, arguments=arguments)
    return f"{title}: {about}" if about else title


def case_tried_sentence(handoff: Handoff) -> str:
    """What a write's case tried, as its request reads; "" for a case without a
    write (a member asking for a person)."""
    tool = str(handoff.tried.get("tool") or "")
    if not tool:
        return ""
    return request_sentence(
        business=handoff.business,
        member=handoff.member,
        tool_name=tool,
        arguments=handoff.tried.get("arguments") or {},
    )
