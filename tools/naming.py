"""What a request is about, in words.

Each id argument of a call is named by what it names: a class by its name, day,
time and instructor; a booking by its class; a diary entry by its food, grams,
meal and day; a food by its name; a payment by its date, amount and description
(read through the gym's Stripe account). Words are in the active language and
times in the gym's time zone. This is the one place that names them, so the
staff's inbox and mails, the member's notices and ``list_my_requests`` say a
request the same way. An id that names nothing that can be read is shown as
given: never a guess.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import caches
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from gymnasia.classes.models import Booking, ClassSession
from gymnasia.errors import DomainError
from gymnasia.gyms.models import Business, Member
from gymnasia.nutrition.models import Food, MealEntry
from gymnasia.when import when_written
from tools.integrations.errors import IntegrationError
from tools.integrations.stripe import ZERO_DECIMAL_CURRENCIES, major_units
from tools.presentation import (
    ARGUMENT_LABELS,
    argument_label,
    argument_value_described,
)

#: How long a payment read from Stripe names its requests before it is read
#: again: the inbox refreshes every few seconds and must not ask Stripe each time.
PAYMENT_KEPT_SECONDS = 300


@dataclass(frozen=True)
class Named:
    """What an argument names: in words, and as facts a model can say in any
    language (a class's name and local start, a freeze's dates)."""

    words: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ArgumentDescribed:
    """One argument of a request: its name, its label and value in words, and
    for an id what it names (``None``: nothing that could be read)."""

    name: str
    label: str
    words: str
    named: Named | None = None


def session_named(session: ClassSession, business: Business) -> Named:
    """A class session by its name, day and time at the gym, and instructor."""
    starts = timezone.localtime(session.starts_at, business.zone)
    words = f"{session.class_type.name}, {when_written(starts, zone=business.zone)}"
    if session.instructor:
        words = f"{words} ({session.instructor})"
    facts = {
        "class": session.class_type.name,
        "starts_at": starts.isoformat(timespec="minutes"),
        "instructor": session.instructor,
    }
    return Named(words, facts)


def _number(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def quantity_written(value: Any) -> str:
    """A quantity as the reader writes it: "150", "12,5" in Spanish."""
    figure = float(value)
    return formats.number_format(int(figure) if figure.is_integer() else figure)


def entry_named(entry: MealEntry) -> Named:
    """A diary entry by its food, grams, meal and day."""
    words = (
        f"{entry.food.name}, {quantity_written(entry.grams)} g, "
        f"{entry.get_meal_display()}, {when_written(entry.date, weekday=True)}"
    )
    facts = {
        "food": entry.food.name,
        "grams": float(entry.grams),
        "meal": entry.meal,
        "date": entry.date.isoformat(),
    }
    return Named(words, facts)


def money_written(amount: Any, currency: str) -> str:
    """An amount with its currency: "12.50 EUR", «12,50 EUR», "500 JPY"."""
    places = 0 if currency.lower() in ZERO_DECIMAL_CURRENCIES else 2
    return f"{formats.number_format(float(amount), decimal_pos=places)} {currency}"


def _payment_facts(
    business: Business, member: Member | None, payment_id: str
) -> dict[str, Any] | None:
    """The member's payment as Stripe tells it, or ``None`` when Stripe cannot
    be read or it is not this member's."""
    from tools.integrations import client_for  # it reads the integrations' models

    kept = caches["local"]
    key = f"payment-named:{business.pk}:{member.pk if member else ''}:{payment_id}"
    facts = kept.get(key)
    if facts is not None:
        return dict(facts) or None
    try:
        client = client_for("stripe", business)
        customer = client.customer_for(member) if member else None
        charge = client.get_charge(payment_id) if customer else None
    except IntegrationError:
        return None  # not kept: Stripe may answer next time
    facts = {}
    if charge is not None and charge.get("customer") == customer:
        currency = str(charge["currency"])
        facts = {
            "date": datetime.datetime.fromtimestamp(
                int(charge["created"]), datetime.UTC
            )
            .date()
            .isoformat(),
            "amount": major_units(int(charge["amount"]), currency),
            "currency": currency.upper(),
            "description": charge.get("description") or "",
        }
    kept.set(key, facts, PAYMENT_KEPT_SECONDS)
    return facts or None


def _vendor_class_facts(
    business: Business, member: Member | None, name: str, value: Any
) -> dict[str, Any] | None:
    """What a session or booking id names at the gym's own software, when it
    serves the gym's classes (an empty dict: nothing, or it cannot be read);
    ``None`` when the classes are Gymnasia's own."""
    from tools.integrations import client_for  # it reads the integrations' models

    try:
        client = client_for("classes", business)
    except IntegrationError:
        return {}
    if not hasattr(client, "find_session"):
        return None
    kept = caches["local"]
    key = f"class-named:{business.pk}:{member.pk if member else ''}:{name}:{value}"
    facts = kept.get(key)
    if facts is not None:
        return dict(facts)
    try:
        if name == "session_id":
            found = client.find_session(session_id=_number(value))
        else:
            found = (
                client.find_booking(member=member, booking_id=_number(value))
                if member
                else None
            )
    except (IntegrationError, DomainError):
        return {}  # not kept: it may answer next time
    facts = {k: found[k] for k in ("class", "starts_at", "instructor")} if found else {}
    kept.set(key, facts, PAYMENT_KEPT_SECONDS)
    return facts


def _class_named(facts: dict[str, Any], business: Business) -> Named:
    starts = datetime.datetime.fromisoformat(facts["starts_at"])
    words = f"{facts['class']}, {when_written(starts, zone=business.zone)}"
    if facts["instructor"]:
        words = f"{words} ({facts['instructor']})"
    return Named(words, facts)


def vendor_session_named(session: dict[str, Any], business: Business) -> Named:
    """A class or booking as the gym's own software's client gives it (its
    ``class``, ``starts_at`` and ``instructor``), in words."""
    return _class_named(session, business)


def _payment_named(facts: dict[str, Any]) -> Named:
    day = when_written(datetime.date.fromisoformat(facts["date"]))
    words = f"{day}, {money_written(facts['amount'], facts['currency'])}"
    if facts["description"]:
        words = f"{words}, {facts['description']}"
    return Named(words, facts)


def argument_named(
    *, business: Business, member: Member | None, name: str, value: Any
) -> Named | None:
    """What the id argument ``name`` names at ``business`` (``None`` when it
    names nothing there, or is not an id)."""
    if name in ("session_id", "booking_id"):
        vendor = _vendor_class_facts(business, member, name, value)
        if vendor is not None:  # the gym's own software serves its classes
            return _class_named(vendor, business) if vendor else None
    if name == "session_id":
        session = (
            ClassSession.objects.filter(business=business, pk=_number(value))
            .select_related("class_type")
            .first()
        )
        return session_named(session, business) if session else None
    if name == "booking_id":
        booking = (
            Booking.objects.filter(business=business, pk=_number(value))
            .select_related("session__class_type")
            .first()
        )
        return session_named(booking.session, business) if booking else None
    if name == "entry_id":
        entry = (
            MealEntry.objects.filter(business=business, pk=_number(value))
            .select_related("food")
            .first()
        )
        return entry_named(entry) if entry else None
    if name == "food_id":
        food = Food.objects.filter(business=business, pk=_number(value)).first()
        return Named(food.name, {"food": food.name}) if food else None
    if name == "payment_id" and isinstance(value, str):
        facts = _payment_facts(business, member, value)
        return _payment_named(facts) if facts else None
    return None


def _date_words(value: Any) -> str | None:
    if not (isinstance(value, str) and len(value) == 10):
        return None
    try:
        day = datetime.date.fromisoformat(value)
    except ValueError:
        return None
    return when_written(day)


def _in_reading_order(key: str) -> tuple[int, str]:
    """Arguments in the order people read them (a start before its end), as
    ``ARGUMENT_LABELS`` lists them; any other after them, by name."""
    order = list(ARGUMENT_LABELS)
    return (order.index(key), key) if key in order else (len(order), key)


def request_arguments_described(
    *, business: Business, member: Member | None, arguments: Mapping[str, Any]
) -> list[ArgumentDescribed]:
    """A request's arguments as people read them, in the active language and the
    gym's time zone: an id as what it names, a date as a date, a meal by its
    name, a number in the reader's notation; anything else as given."""
    described = []
    # In reading order: stored arguments come back in the database's order
    # (PostgreSQL's jsonb puts "end" before "start").
    for name in sorted(arguments, key=_in_reading_order):
        value = arguments[name]
        named = (
            argument_named(business=business, member=member, name=name, value=value)
            if name.endswith("_id")
            else None
        )
        shown = argument_value_described(name, value)
        # A number as the reader writes it (40,5 in Spanish).
        words = named.words if named else _date_words(value) or formats.localize(shown)
        described.append(
            ArgumentDescribed(
                name=name,
                label=argument_label(name).capitalize(),
                words=words,
                named=named,
            )
        )
    return described


def request_facts(
    *, business: Business, member: Member | None, arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """A request's arguments as facts a model can say in any language: an id as
    the facts of what it names, under the argument's name without ``_id``
    ("session": its class, local start and instructor); any other as given."""
    facts: dict[str, Any] = {}
    for each in request_arguments_described(
        business=business, member=member, arguments=arguments
    ):
        if each.named:
            facts[each.name.removesuffix("_id")] = each.named.facts
        else:
            facts[each.name] = arguments[each.name]
    return facts


def request_about(
    *, business: Business, member: Member | None, arguments: Mapping[str, Any]
) -> str:
    """A request's arguments in one line: "class: Spinning, Dec. 3, 2026, 7:30
    a.m. (Marta)"; "start: Aug. 1, 2027; end: Aug. 31, 2027"."""
    return "; ".join(
        f"{argument_label(each.name)}: {each.words}"
        for each in request_arguments_described(
            business=business, member=member, arguments=arguments
        )
    )


def arguments_changed(
    difference: Mapping[str, Any],
    *,
    business: Business | None = None,
    member: Member | None = None,
) -> str:
    """What a correction changed, as ``{argument: [before, after]}`` reads for a
    member, in reading order (a start before its end): "end: Jan. 20, 2027 → Jan.
    10, 2027", a meal by its name; an id by what it names before and
    after ("class: Spinning, … → Yoga, …"), or, where neither can be read (or no
    gym is given), only as changed: a bare number means nothing to them."""
    changes = []
    for key in sorted(difference, key=_in_reading_order):
        before, after = difference[key]
        what = argument_label(key)
        if not key.endswith("_id"):
            was, now = (
                _date_words(value) or argument_value_described(key, value)
                for value in (before, after)
            )
            changes.append(f"{what}: {was} → {now}")
            continue
        was, now = (
            argument_named(business=business, member=member, name=key, value=value)
            if business is not None
            else None
            for value in (before, after)
        )
        if was and now:
            changes.append(f"{what}: {was.words} → {now.words}")
        elif now:
            changes.append(f"{what}: {now.words}")
        else:
            changes.append(_("a different %(what)s") % {"what": what})
    return "; ".join(changes)
