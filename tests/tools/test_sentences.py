"""A request reads as one sentence in the reader's language, for every tool that
can wait for staff (every write): the dates as people write them, a class by its
name, day, hour and instructor, a refund by its amount and what was paid; an id
that names nothing readable as given, never guessed."""

from __future__ import annotations

import datetime

import pytest
import time_machine
from django.utils import translation

from tools.registry import published_registry
from tools.sentences import request_sentence

pytestmark = pytest.mark.django_db


@pytest.fixture
def monday(db):
    """Monday 7 December 2026 at the gym: the world's classes are tomorrow."""
    moment = datetime.datetime(2026, 12, 7, 9, tzinfo=datetime.UTC)
    with time_machine.travel(moment, tick=True):
        yield


@pytest.fixture
def gym(monday, world, stripe):
    world.connect_stripe(stripe)
    return world


def _said(world, tool: str, arguments: dict, language: str) -> str:
    with translation.override(language):
        return request_sentence(
            business=world.business,
            member=world.member,
            tool_name=tool,
            arguments=arguments,
        )


def _arguments(world) -> dict[str, dict]:
    return {
        "freeze_membership": {"start": "2027-02-03", "end": "2027-02-09"},
        "book_class": {"session_id": world.ids["session_id:spinning"]},
        "cancel_booking": {"booking_id": world.ids["booking_id:my_booking"]},
        "add_food_to_meal": {
            "date": "2026-12-07",
            "meal": "lunch",
            "food_id": world.ids["food_id:rice_white"],
            "grams": 150,
        },
        "remove_meal_entry": {"entry_id": world.ids["entry_id:my_entry"]},
        "refund_payment": {"payment_id": world.ids["payment_id:towel"], "amount": 5},
        "handoff_to_staff": {"reason": "Quiero cambiar de tarifa"},
    }


SAID = {
    "freeze_membership": (
        "Congelar la cuota del 3 al 9 de febrero de 2027",
        "Freeze the membership from 3 to 9 February 2027",
    ),
    "book_class": (
        "Reservar Spinning el martes 8 de diciembre, 18:00, con Marta",
        "Book Spinning on Tuesday 8 December, 18:00, with Marta",
    ),
    "cancel_booking": (
        "Cancelar la reserva de Pilates del martes 8 de diciembre, 20:00, con Marta",
        "Cancel the booking of Pilates on Tuesday 8 December, 20:00, with Marta",
    ),
    "add_food_to_meal": (
        "Apuntar 150 g de Arroz blanco (cocido) en la comida del lunes 7 de diciembre",
        "Log 150 g of Arroz blanco (cocido) for lunch on Monday 7 December",
    ),
    "remove_meal_entry": (
        "Quitar 150 g de Arroz blanco (cocido) de la comida del lunes 7 de diciembre",
        "Remove 150 g of Arroz blanco (cocido) from lunch on Monday 7 December",
    ),
    "refund_payment": (
        "Devolver 5,00 EUR de los 12,50 EUR pagados el 2 de febrero (Toalla)",
        "Refund 5.00 EUR of the 12.50 EUR paid on 2 February (Toalla)",
    ),
    "handoff_to_staff": (
        "Hablar con una persona: Quiero cambiar de tarifa",
        "Talk to a person: Quiero cambiar de tarifa",
    ),
}


def test_every_write_has_its_sentence():
    """A tool that changes something can be set to wait for staff: each has one."""
    writes = {tool.name for tool in published_registry() if tool.is_write}
    assert writes == set(SAID)


@pytest.mark.parametrize("tool", sorted(SAID))
def test_a_request_reads_as_a_sentence_in_spanish_and_in_english(gym, tool):
    arguments = _arguments(gym)[tool]
    spanish, english = SAID[tool]

    assert _said(gym, tool, arguments, "es") == spanish
    assert _said(gym, tool, arguments, "en") == english


def test_a_freeze_across_months_and_years_says_each_once(monday, world):
    across = {"start": "2027-02-28", "end": "2027-03-03"}
    new_year = {"start": "2026-12-28", "end": "2027-01-03"}

    assert _said(world, "freeze_membership", across, "es") == (
        "Congelar la cuota del 28 de febrero al 3 de marzo de 2027"
    )
    assert _said(world, "freeze_membership", across, "en") == (
        "Freeze the membership from 28 February to 3 March 2027"
    )
    assert _said(world, "freeze_membership", new_year, "es") == (
        "Congelar la cuota del 28 de diciembre de 2026 al 3 de enero de 2027"
    )


def test_a_whole_refund_and_more_food_once_again(gym):
    whole = {"payment_id": gym.ids["payment_id:monthly_fee"], "amount": 45}
    again = {**_arguments(gym)["add_food_to_meal"], "grams": 40.5, "again": True}

    assert _said(gym, "refund_payment", whole, "es") == (
        "Devolver los 45,00 EUR pagados el 28 de mayo (Cuota mensual)"
    )
    assert _said(gym, "add_food_to_meal", again, "en") == (
        "Log 40.5 g more of Arroz blanco (cocido) for lunch on Monday 7 December"
    )
    assert _said(gym, "add_food_to_meal", again, "es").startswith(
        "Apuntar otros 40,5 g de Arroz blanco (cocido) en la comida"
    )


def test_what_names_nothing_readable_reads_as_given(monday, world):
    """A class that is not there, another customer's payment: never a guess."""
    gone = {"session_id": 999_999}
    assert _said(world, "book_class", gone, "en") == "Book a class: class: 999999"
    assert _said(world, "book_class", gone, "es") == "Reservar una clase: clase: 999999"
    stranger = {"payment_id": "ch_nothere", "amount": 5}
    assert _said(world, "refund_payment", stranger, "en") == (
        "Refund a card payment: payment: ch_nothere; amount: 5"
    )
