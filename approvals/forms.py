"""The correction of a request: a Django form built from its tool's schema, whose
choices are only what could be valid.

A class is chosen among the upcoming sessions of the same class type at the
request's gym that still have a free place (the one asked for included and
selected); where the gym's own software (Mindbody) serves its classes, among its
classes of the same name with a free place, read there, never Gymnasia's own
sessions. A booking or a diary entry among the member's; a food among the
gym's, by name; a meal by its name; a date with a date picker; a number with a
number input. What the form accepts is then checked as the member's own
arguments were (``tools.dispatcher.correction_checked``), so the form narrows
the choice and the harness still decides.
"""

from __future__ import annotations

import datetime
from typing import Any

from django import forms
from django.core.cache import cache
from django.utils.translation import gettext as _

from gymnasia.classes.models import ClassSession
from gymnasia.classes.selectors import bookings_upcoming, class_sessions_with_places
from gymnasia.errors import DomainError
from gymnasia.gyms.selectors import business_today
from gymnasia.nutrition.models import Food, MealEntry
from tools.integrations import client_for
from tools.integrations.errors import IntegrationError
from tools.models import ToolCallLog
from tools.naming import entry_named, session_named, vendor_session_named
from tools.presentation import argument_label, argument_value_described
from tools.registry import published_registry

#: Arguments staff do not correct: ``again`` says how the member asked, not what.
NOT_CORRECTED = frozenset({"again"})

#: How far ahead the classes of the gym's own software are offered instead.
VENDOR_CLASSES_AHEAD_DAYS = 28
#: How long a request's choices read from the gym's own software are kept: the
#: inbox draws every waiting request's form again at each refresh (5 seconds),
#: and Mindbody bills each call.
VENDOR_CHOICES_KEPT_SECONDS = 60


#: The arguments naming a class or a booking.
CLASS_IDS = frozenset({"session_id", "booking_id"})


class CorrectionForm(forms.Form):
    """The arguments of one request, each field named as its argument."""

    def __init__(self, call: ToolCallLog, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", f"id_{call.pk}_%s")
        super().__init__(*args, **kwargs)
        self.call = call
        tool = published_registry().get(call.tool_name)
        schema = tool.declaration.parameters if tool else {}
        required = set(schema.get("required", []))
        arguments = call.arguments or {}
        for name, spec in schema.get("properties", {}).items():
            if name in NOT_CORRECTED:
                continue
            field = self._field(name, spec, arguments.get(name))
            field.label = argument_label(name).capitalize()
            field.required = name in required
            field.initial = arguments.get(name)
            self.fields[name] = field

    def _field(self, name: str, spec: dict[str, Any], value: Any) -> forms.Field:
        """The input an argument's schema calls for; an id, a choice of what it
        may name."""
        vendor = self._vendor_classes() if name in CLASS_IDS else None
        if vendor is not None:
            return self._vendor_field(vendor, name, value)
        if name == "session_id":
            return forms.TypedChoiceField(coerce=int, choices=self._sessions(value))
        if name == "booking_id":
            return forms.TypedChoiceField(coerce=int, choices=self._bookings())
        if name == "entry_id":
            return forms.TypedChoiceField(coerce=int, choices=self._entries(value))
        if name == "food_id":
            foods = Food.objects.filter(business_id=self.call.business_id)
            return forms.TypedChoiceField(
                coerce=int,
                choices=[(f.pk, f.name) for f in foods.order_by("name", "pk")],
            )
        if spec.get("format") == "date":
            return forms.DateField(widget=forms.DateInput(attrs={"type": "date"}))
        if spec.get("enum"):
            return forms.ChoiceField(
                choices=[
                    (v, str(argument_value_described(name, v)).capitalize())
                    for v in spec["enum"]
                ]
            )
        if spec.get("type") == "integer":
            return forms.IntegerField()
        if spec.get("type") == "number":
            return forms.FloatField(widget=forms.NumberInput(attrs={"step": "any"}))
        return forms.CharField(max_length=spec.get("maxLength"))

    def _vendor_classes(self) -> Any | None:
        """The client of the gym's own software where it serves the classes
        (``False`` when it does but cannot be reached); ``None``: Gymnasia's own."""
        try:
            client = client_for("classes", self.call.business)
        except IntegrationError:
            return False
        return client if hasattr(client, "find_session") else None

    def _vendor_field(self, client: Any, name: str, value: Any) -> forms.Field:
        """A class or booking chosen among those the gym's own software has now;
        none when it cannot be read (said in words, never Gymnasia's own)."""
        key = f"correction-choices:{self.call.pk}:{name}"
        choices: list[tuple[int, str]] | None = cache.get(key) if client else None
        if client and choices is None:
            try:
                if name == "session_id":
                    choices = self._vendor_sessions(client, value)
                else:
                    choices = self._vendor_bookings(client)
            except (IntegrationError, DomainError):
                choices = None
            else:
                cache.set(key, choices, VENDOR_CHOICES_KEPT_SECONDS)
        field = forms.TypedChoiceField(coerce=int, choices=choices or [])
        if choices is None:
            field.help_text = _(
                "The gym's classes are in Mindbody, which cannot be read right now: "
                "choose the class there, or try again later."
            )
        return field

    def _vendor_sessions(self, client: Any, value: Any) -> list[tuple[int, str]]:
        """The classes of the asked one's name not started yet with a free place
        (the asked one listed whatever its places)."""
        asked = (
            client.find_session(session_id=value) if isinstance(value, int) else None
        )
        if asked is None:
            return []
        today = business_today(business=self.call.business)
        listed = client.list_sessions(
            date_from=today,
            date_to=today + datetime.timedelta(days=VENDOR_CLASSES_AHEAD_DAYS),
            class_type=asked["class"],
        )
        same = [
            s
            for s in listed
            if s["class"].lower() == asked["class"].lower()
            and (s["places_left"] > 0 or s["session_id"] == value)
        ]
        if all(s["session_id"] != value for s in same):
            same = sorted(
                [asked, *same], key=lambda s: (s["starts_at"], s["session_id"])
            )
        business = self.call.business
        return [
            (s["session_id"], vendor_session_named(s, business).words) for s in same
        ]

    def _vendor_bookings(self, client: Any) -> list[tuple[int, str]]:
        if self.call.member is None:
            return []
        business = self.call.business
        return [
            (b["booking_id"], vendor_session_named(b, business).words)
            for b in client.list_bookings(member=self.call.member)
        ]

    def _sessions(self, value: Any) -> list[tuple[int, str]]:
        business = self.call.business
        current = ClassSession.objects.filter(
            business=business, pk=value if isinstance(value, int) else 0
        ).first()
        if current is None:
            return []
        sessions = class_sessions_with_places(
            business=business, class_type_id=current.class_type_id, including=value
        )
        return [(s.pk, session_named(s, business).words) for s in sessions]

    def _bookings(self) -> list[tuple[int, str]]:
        if self.call.member is None:
            return []
        business = self.call.business
        bookings = bookings_upcoming(business=business, member=self.call.member)
        return [(b.pk, session_named(b.session, business).words) for b in bookings]

    def _entries(self, value: Any) -> list[tuple[int, str]]:
        """The member's entries of the day of the one asked for (never another
        member's)."""
        if self.call.member_id is None:
            return []
        entries = MealEntry.objects.filter(
            business_id=self.call.business_id, member_id=self.call.member_id
        )
        entry = entries.filter(pk=value if isinstance(value, int) else 0).first()
        day = entry.date if entry else business_today(business=self.call.business)
        return [
            (e.pk, entry_named(e).words)
            for e in entries.filter(date=day)
            .select_related("food")
            .order_by("meal", "pk")
        ]

    def arguments(self) -> dict[str, Any]:
        """The corrected arguments as the tool takes them (after ``is_valid``):
        dates as ISO text, ids as numbers; an optional one left empty, left out."""
        arguments = {}
        for name, value in self.cleaned_data.items():
            if value in (None, ""):
                continue
            if isinstance(value, datetime.date):
                value = value.isoformat()
            arguments[name] = value
        return arguments

    def problems(self) -> str:
        """What is wrong with what was sent, each field by its label."""
        said = []
        for name, errors in self.errors.items():
            words = " ".join(str(error) for error in errors)
            field = self.fields.get(name)
            said.append(f"{field.label}: {words}" if field else words)
        return " ".join(said)
