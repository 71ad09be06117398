"""How the inbox names tools for staff: in plain words, not function names."""

from __future__ import annotations

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
