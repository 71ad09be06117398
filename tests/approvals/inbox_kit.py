"""What the staff inbox's tests share besides fixtures: a case whose outcome is
unknown."""

from __future__ import annotations

from django.utils import timezone

from tests.faults import Fault, inject_fault
from tools.models import Handoff


def unknown_food_write(world) -> Handoff:
    """The case of 40 g of oats added to dinner whose answer never came back."""
    with inject_fault("nutrition", Fault.TIMEOUT_AFTER_COMMIT):
        world.call(
            "add_food_to_meal",
            {
                "date": world.day(0),
                "meal": "dinner",
                "food_id": world.ids["food_id:oats"],
                "grams": 40,
            },
        )
    return Handoff.objects.get()


MONTHS = (
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre "
    "noviembre diciembre"
).split()


def spanish_date(day: str) -> str:
    """An ISO date as a Spanish reader reads it: «20 de agosto de 2027»; this
    year's without it: «20 de agosto»."""
    year, month, number = (int(part) for part in day.split("-"))
    written = f"{number} de {MONTHS[month - 1]}"
    return written if year == timezone.localdate().year else f"{written} de {year}"
