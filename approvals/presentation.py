"""How the inbox reads for staff: tools and decisions in plain words, not the
names and codes recorded."""

from __future__ import annotations

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

TOOL_TITLES = {
    "add_food_to_meal": _("Add food to the meal diary"),
    "remove_meal_entry": _("Remove a meal diary entry"),
    "book_class": _("Book a class"),
    "cancel_booking": _("Cancel a class booking"),
    "freeze_membership": _("Freeze the membership"),
    "refund_payment": _("Refund a card payment"),
    "handoff_to_staff": _("Talk to a person"),
}


def tool_title(name: str) -> str:
    return str(TOOL_TITLES.get(name, name))


#: What a correction records as the decision's reason of the request it
#: superseded: a code, not words for staff.
CORRECTED = "corrected"


def decision_reason_described(*, status: str, reason: str) -> str:
    """A decision's reason as staff read it: the words staff wrote, or for a
    request a correction superseded (which records a code), what became of it."""
    if status == "superseded" and reason == CORRECTED:
        return gettext("corrected into a new request")
    return reason
