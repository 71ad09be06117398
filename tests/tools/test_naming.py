"""What a request is about, in words: each id named by what it names, in the
reader's language and the gym's time zone; an id that names nothing readable
shown as given, never guessed."""

from __future__ import annotations

import datetime

import pytest
import time_machine
from django.utils import timezone, translation

from gymnasia.classes.models import ClassSession
from tools.naming import argument_named, arguments_changed, request_about

pytestmark = pytest.mark.django_db


def _named(world, name, value, member="member"):
    who = world.member if member == "member" else member
    return argument_named(business=world.business, member=who, name=name, value=value)


def test_a_class_is_named_at_the_gyms_time_whatever_the_active_zone(world):
    """The gym is in Madrid; a reader elsewhere still reads the class's own hour."""
    session = world.ids["session_id:spinning"]
    with translation.override("es"), timezone.override("America/New_York"):
        named = _named(world, "session_id", session)
    assert named is not None
    assert named.words.startswith("Spinning, ")
    assert "18:00" in named.words
    assert named.words.endswith(" (Marta)")


def test_a_class_is_named_in_the_readers_language(world):
    session = ClassSession.objects.get(pk=world.ids["session_id:spinning"])
    starts = timezone.localtime(session.starts_at, world.business.zone)
    with translation.override("en"):
        english = _named(world, "session_id", session.pk).words
    with translation.override("es"):
        spanish = _named(world, "session_id", session.pk).words
    year = "" if starts.year == timezone.localdate().year else f" {starts.year}"
    assert (
        english
        == f"Spinning, {starts:%A} {starts.day} {starts:%B}{year}, 18:00 (Marta)"
    )
    assert spanish.startswith("Spinning, ") and " de " in spanish
    assert spanish.endswith(", 18:00 (Marta)")


def test_a_booking_is_named_by_its_class_and_an_entry_by_its_food(world):
    with translation.override("en"):
        booking = _named(world, "booking_id", world.ids["booking_id:my_booking"])
        entry = _named(world, "entry_id", world.ids["entry_id:my_entry"])
    assert booking.words.startswith("Pilates, ")
    assert entry.words.startswith("Arroz blanco (cocido), 150 g, Lunch, ")
    assert entry.facts["meal"] == "lunch"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("session_id", "foreign_session"),
        ("food_id", "foreign_food"),
        ("session_id", 999_999),
        ("entry_id", "not a number"),
    ],
)
def test_an_id_of_another_gym_or_of_nothing_names_nothing(world, name, value):
    found = world.ids.get(f"{name}:{value}", value)
    assert _named(world, name, found) is None


def test_a_payment_is_named_by_its_date_amount_and_description(world, stripe):
    world.connect_stripe(stripe)
    with translation.override("en"):
        named = _named(world, "payment_id", world.ids["payment_id:towel"])
    assert named is not None
    assert named.words.endswith(", 12.50 EUR, Toalla")
    assert named.facts["amount"] == 12.5


def test_another_customers_payment_or_stripe_away_shows_the_id_as_given(world, stripe):
    assert _named(world, "payment_id", "ch_notconnected") is None  # not connected
    world.connect_stripe(stripe)
    assert _named(world, "payment_id", world.ids["payment_id:stranger"]) is None
    with translation.override("en"):
        about = request_about(
            business=world.business,
            member=world.member,
            arguments={"payment_id": world.ids["payment_id:stranger"], "amount": 5},
        )
    assert about == f"payment: {world.ids['payment_id:stranger']}; amount: 5"


@time_machine.travel(datetime.datetime(2026, 12, 7, 9, tzinfo=datetime.UTC))
def test_what_a_correction_changed_names_the_classes_before_and_after(world):
    before, after = world.ids["session_id:spinning"], world.ids["session_id:pilates"]
    with translation.override("es"):
        changed = arguments_changed(
            {"session_id": [before, after], "end": ["2027-01-20", "2027-01-10"]},
            business=world.business,
            member=world.member,
        )
    assert changed.startswith("clase: Spinning, ") and " → Pilates, " in changed
    assert changed.endswith("; fin: 20 de enero de 2027 → 10 de enero de 2027")


def test_what_a_correction_changed_without_a_gym_says_only_that_it_changed():
    with translation.override("en"):
        assert arguments_changed({"session_id": [5, 7]}) == "a different class"
    with translation.override("es"):
        assert arguments_changed({"session_id": [5, 7]}) == "cambio de clase"


@time_machine.travel(datetime.datetime(2026, 12, 7, 9, tzinfo=datetime.UTC))
def test_dates_read_as_dates(world):
    with translation.override("en"):
        about = request_about(
            business=world.business,
            member=world.member,
            arguments={"start": "2027-08-01", "end": "2027-08-31"},
        )
    assert about == "start: 1 August 2027; end: 31 August 2027"


@time_machine.travel(datetime.datetime(2026, 12, 7, 9, tzinfo=datetime.UTC))
def test_a_correction_reads_in_reading_order_with_dates_and_meals_in_words():
    """In words and in reading order: what it is about, then the start before
    the end; dates as dates, a meal by its name, an id only as changed."""
    difference = {
        "end": ["2027-01-20", "2027-01-10"],
        "session_id": [5, 7],
        "start": ["2027-01-01", "2027-01-02"],
        "meal": ["breakfast", "dinner"],
    }
    with translation.override("en"):
        assert arguments_changed(difference) == (
            "a different class; start: 1 January 2027 → 2 January 2027; "
            "end: 20 January 2027 → 10 January 2027; meal: Breakfast → Dinner"
        )
    with translation.override("es"):
        assert arguments_changed(difference) == (
            "cambio de clase; inicio: 1 de enero de 2027 → 2 de enero de 2027; "
            "fin: 20 de enero de 2027 → 10 de enero de 2027; comida: Desayuno → Cena"
        )
