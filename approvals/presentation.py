"""How the inbox reads for staff: decisions in plain words, not the codes
recorded (tools are named by ``tools.presentation.tool_title``)."""

from __future__ import annotations

import datetime
from typing import Any

from django.utils import formats, timezone
from django.utils.translation import gettext

from gymnasia.classes.models import Booking, ClassSession
from gymnasia.nutrition.models import Food, MealEntry
from tools.models import Handoff, ToolCallLog
from tools.presentation import arguments_described, tool_title

#: What a correction records as the decision's reason of the request it
#: superseded: a code, not words for staff.
CORRECTED = "corrected"


def decision_reason_described(*, status: str, reason: str) -> str:
    """A decision's reason as staff read it: the words staff wrote, or for a
    request a correction superseded (which records a code), what became of it."""
    if status == "superseded" and reason == CORRECTED:
        return gettext("corrected into a new request")
    return reason


def member_named(member: object | None) -> str:
    """A request's or case's member as staff read it: a deleted or never known
    member is an anonymous visitor."""
    return str(member) if member else gettext("anonymous visitor")


def case_named(handoff: Handoff) -> str:
    """What a case's controls name it by: its tool, or what the member asked."""
    tool = str(handoff.tried.get("tool") or "")
    return tool_title(tool) if tool else handoff.get_cause_display()


def _session_described(session: ClassSession) -> str:
    starts = timezone.localtime(session.starts_at)
    words = (
        f"{session.class_type.name}, {formats.date_format(starts, 'DATETIME_FORMAT')}"
    )
    return f"{words} ({session.instructor})" if session.instructor else words


def _id_described(call: ToolCallLog, key: str, value: Any) -> str | None:
    """What an id argument names, read at the call's gym (``None`` when it names
    nothing there: shown as given)."""
    business = call.business_id
    if key == "session_id":
        session = (
            ClassSession.objects.filter(business_id=business, pk=_number(value))
            .select_related("class_type")
            .first()
        )
        return _session_described(session) if session else None
    if key == "booking_id":
        booking = (
            Booking.objects.filter(business_id=business, pk=_number(value))
            .select_related("session__class_type")
            .first()
        )
        return _session_described(booking.session) if booking else None
    if key == "entry_id":
        entry = (
            MealEntry.objects.filter(business_id=business, pk=_number(value))
            .select_related("food")
            .first()
        )
        if entry is None:
            return None
        return (
            f"{entry.food.name}, {entry.grams:g} g, {entry.get_meal_display()}, "
            f"{formats.date_format(entry.date, 'DATE_FORMAT')}"
        )
    if key == "food_id":
        food = Food.objects.filter(business_id=business, pk=_number(value)).first()
        return food.name if food else None
    return None


def _number(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def request_described(call: ToolCallLog) -> list[tuple[str, str]]:
    """A request's arguments as staff read them, in the active language and time
    zone: each as (label, words), an id as what it names (the class's name and
    time, the diary entry's food), a date as a date."""
    described = []
    for label, key, shown in arguments_described(call.arguments or {}):
        words = _id_described(call, key, shown) if key.endswith("_id") else None
        if words is None and isinstance(shown, str) and len(shown) == 10:
            try:
                day = datetime.date.fromisoformat(shown)
            except ValueError:
                pass
            else:
                words = formats.date_format(day, "DATE_FORMAT")
        described.append((str(label).capitalize(), words if words else str(shown)))
    return described
