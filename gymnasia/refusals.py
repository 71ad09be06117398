"""A refusal told to a member: its code and parameters in plain words, in the
active language.

Domain errors (``gymnasia.errors``) and the schema check of a tool's arguments
(``tools.dispatcher``) refuse with a stable code, the field it is about and plain
JSON parameters. The model reads the precise English reason beside them; what a
member reads is written here, from the code, so that no reason is ever translated
back from English, and a code without words here gets an honest general sentence
rather than the system's English.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.utils.formats import number_format
from django.utils.translation import gettext, gettext_noop

from gymnasia.when import when_written

#: Each code's sentence; ``%(what)s`` is the field's name for a member.
SENTENCES: dict[str, str] = {
    # The schema's own checks (and the domain's, where they refuse the same).
    "missing": gettext_noop("%(what)s is missing."),
    "wrong_type": gettext_noop("%(what)s is not valid."),
    "more_than": gettext_noop("%(what)s has to be more than %(limit)s."),
    "at_least": gettext_noop("%(what)s has to be at least %(limit)s."),
    "less_than": gettext_noop("%(what)s has to be less than %(limit)s."),
    "at_most": gettext_noop("%(what)s can be at most %(limit)s."),
    "not_a_date": gettext_noop("%(what)s has to be a date like 2027-03-01."),
    "not_one_of": gettext_noop("%(what)s has to be one of: %(choices)s."),
    "empty": gettext_noop("%(what)s cannot be empty."),
    "too_long": gettext_noop("%(what)s can have at most %(max)s characters."),
    "unknown_id": gettext_noop("I could not tell which one you mean."),
    "unreadable": gettext_noop("The request could not be read."),
    "over_limit": gettext_noop("The amount is above this gym's limit of %(limit)s."),
    # The domain's rules.
    "end_before_start": gettext_noop("The end date cannot be before the start date."),
    "in_the_past": gettext_noop("%(what)s cannot be in the past."),
    "member_not_found": gettext_noop("I could not find you among the gym's members."),
    "freeze_too_long": gettext_noop("A freeze can last at most %(max)s days."),
    "no_membership_to_freeze": gettext_noop(
        "You have no membership that can be frozen."
    ),
    "freeze_after_membership_ends": gettext_noop(
        "The freeze would start after your membership ends (%(ends)s)."
    ),
    "freeze_overlaps": gettext_noop(
        "It overlaps your freeze from %(start)s to %(end)s."
    ),
    "freeze_overlaps_waiting": gettext_noop(
        "It overlaps your freeze from %(start)s to %(end)s, which is waiting for "
        "the staff's approval."
    ),
    "class_not_found": gettext_noop("I could not find that class."),
    "class_cancelled": gettext_noop("That class has been cancelled."),
    "class_started": gettext_noop("That class has already started."),
    "no_membership_on_class_day": gettext_noop(
        "You have no active membership on the day of that class."
    ),
    "already_booked": gettext_noop("You are already booked into that class."),
    "class_full": gettext_noop("That class is full."),
    "class_requires_payment": gettext_noop(
        "You have no pass or membership that pays for that class; the gym's "
        "front desk can help you get one."
    ),
    "outside_booking_window": gettext_noop("That class cannot be booked right now."),
    "booking_not_found": gettext_noop("I could not find that booking among yours."),
    "started_class_not_cancelled": gettext_noop(
        "A class that has started cannot be cancelled."
    ),
    "food_not_found": gettext_noop("I could not find that food in the gym's catalog."),
    "entry_not_found": gettext_noop("I could not find that entry in your diary."),
    "outside_diary_days": gettext_noop(
        "The diary takes dates from %(back)s days ago to %(ahead)s days ahead."
    ),
    "too_many_days": gettext_noop(
        "Classes can be listed for at most %(days)s days at a time."
    ),
    "payment_not_found": gettext_noop("I could not find that payment among yours."),
    "refund_over_rest": gettext_noop(
        "At most %(rest)s %(currency)s of this payment can still be refunded."
    ),
    "refund_over_rest_waiting": gettext_noop(
        "At most %(rest)s %(currency)s of this payment can still be refunded: "
        "refunds of %(waiting)s %(currency)s more are waiting for the staff's "
        "approval."
    ),
    "too_many_decimals": gettext_noop(
        "The amount has more decimals than %(currency)s allows."
    ),
    "payments_refused": gettext_noop("The payment service refused the request."),
    "text_unstorable": gettext_noop("The text has characters that cannot be saved."),
}

#: What a code without a sentence of its own (or with parameters it cannot
#: fill) says: true, and in her language.
GENERIC = gettext_noop("It could not be done with those details.")

#: What each field of a tool's arguments is, for a member.
FIELD_WORDS: dict[str, str] = {
    "grams": gettext_noop("the amount"),
    "amount": gettext_noop("the amount of money"),
    "date": gettext_noop("the date"),
    "start": gettext_noop("the start date"),
    "end": gettext_noop("the end date"),
    "date_from": gettext_noop("the first day"),
    "date_to": gettext_noop("the last day"),
    "meal": gettext_noop("the meal"),
    "query": gettext_noop("the search"),
    "reason": gettext_noop("the reason"),
    "class_type": gettext_noop("the kind of class"),
}
#: A field's name when it has none of its own.
SOME_DETAIL = gettext_noop("a detail")
#: A figure written as text.
NUMBER = re.compile(r"-?\d+(\.\d+)?")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: The unit a field's figures are said in.
UNITS = {"grams": "g"}


def refusal_said(refusal: Mapping[str, Any]) -> str:
    """A refusal (``{"code", "field", "params"}``) in plain words in the active
    language: "The amount has to be more than 0 g."."""
    code = str(refusal.get("code") or "")
    field = str(refusal.get("field") or "")
    params = refusal.get("params") or {}
    if field.endswith("_id") and code in {"wrong_type", "at_least", "missing"}:
        code = "unknown_id"
    sentence = SENTENCES.get(code)
    if sentence is None or not isinstance(params, Mapping):
        return gettext(GENERIC)
    unit = UNITS.get(field)
    values = {
        name: _said(value, field, unit if name in {"limit", "max"} else None)
        for name, value in params.items()
    }
    values["what"] = gettext(FIELD_WORDS.get(field, SOME_DETAIL))
    try:
        said = gettext(sentence) % values
    except (KeyError, TypeError, ValueError):
        return gettext(GENERIC)
    return said[:1].upper() + said[1:]


def refusals_said(refusals: Any) -> str:
    """Each refusal of a list in plain words, one after another; the general
    sentence when there is none to tell."""
    if not isinstance(refusals, list | tuple) or not refusals:
        return gettext(GENERIC)
    said = [refusal_said(r) for r in refusals if isinstance(r, Mapping)]
    return " ".join(dict.fromkeys(said)) or gettext(GENERIC)


def _said(value: Any, field: str, unit: str | None) -> str:
    """A parameter as a member reads it: figures with her decimal mark, a day
    as people write it, a list of choices in her words."""
    if isinstance(value, str) and ISO_DATE.fullmatch(value):
        return when_written(datetime.date.fromisoformat(value), year=True)
    if isinstance(value, str) and NUMBER.fullmatch(value):
        value = Decimal(value)  # an amount kept exact as text ("12.50")
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float | Decimal):
        number = value
        if isinstance(value, float) and value.is_integer():
            number = int(value)
        figure = number_format(number, use_l10n=True)
        return f"{figure} {unit}" if unit else figure
    if isinstance(value, list | tuple):
        return ", ".join(_choice(item, field) for item in value)
    return str(value)


def _choice(value: Any, field: str) -> str:
    if field == "meal":
        from gymnasia.nutrition.models import Meal

        if value in Meal.values:
            return str(Meal(value).label).lower()
    return str(value)
