"""The food catalog and the meal diary services."""

from __future__ import annotations

import datetime
from decimal import Decimal
from importlib import import_module

import pytest

from gymnasia.errors import InvalidValue, NotFound
from gymnasia.nutrition.models import Food, MealEntry
from gymnasia.nutrition.selectors import foods_search, meal_diary
from gymnasia.nutrition.services import food_upsert, meal_entry_add, meal_entry_remove
from tests.factories import BusinessFactory, FoodFactory, MemberFactory

pytestmark = pytest.mark.django_db

TODAY = datetime.date.today()


@pytest.fixture
def member():
    return MemberFactory()


@pytest.fixture
def rice(member):
    return FoodFactory(
        business=member.business,
        name="Arroz blanco (cocido)",
        aliases="arroz",
        carbohydrates_per_100g=Decimal("28.0"),
    )


def test_meal_entry_add_logs_the_food(member, rice):
    entry = meal_entry_add(
        business=member.business,
        member=member,
        date=TODAY,
        meal="lunch",
        food_id=rice.pk,
        grams=150,
    )
    entry.refresh_from_db()
    assert (entry.member, entry.food, entry.meal, entry.grams) == (
        member,
        rice,
        "lunch",
        Decimal("150.0"),
    )


def test_meal_entry_add_accepts_fractional_grams(member, rice):
    entry = meal_entry_add(
        business=member.business,
        member=member,
        date=TODAY,
        meal="snack",
        food_id=rice.pk,
        grams=12.5,
    )
    assert entry.grams == Decimal("12.5")


@pytest.mark.parametrize(
    "grams", [0, -5, "-0.01", 0.04, 5000.1, "abc", True, float("nan")]
)
def test_meal_entry_add_refuses_bad_grams(member, rice, row_counts, grams):
    before = row_counts()
    with pytest.raises(InvalidValue) as error:
        meal_entry_add(
            business=member.business,
            member=member,
            date=TODAY,
            meal="lunch",
            food_id=rice.pk,
            grams=grams,
        )
    assert error.value.field == "grams"
    assert row_counts() == before


def test_meal_entry_add_refuses_unknown_food(member, row_counts):
    before = row_counts()
    with pytest.raises(NotFound):
        meal_entry_add(
            business=member.business,
            member=member,
            date=TODAY,
            meal="lunch",
            food_id=999999,
            grams=100,
        )
    assert row_counts() == before


def test_meal_entry_add_refuses_another_business_food(member, row_counts):
    foreign_food = FoodFactory(business=BusinessFactory())
    before = row_counts()
    with pytest.raises(NotFound):
        meal_entry_add(
            business=member.business,
            member=member,
            date=TODAY,
            meal="lunch",
            food_id=foreign_food.pk,
            grams=100,
        )
    assert row_counts() == before


def test_meal_entry_add_refuses_another_business_member(rice, row_counts):
    stranger = MemberFactory()
    before = row_counts()
    with pytest.raises(NotFound):
        meal_entry_add(
            business=rice.business,
            member=stranger,
            date=TODAY,
            meal="lunch",
            food_id=rice.pk,
            grams=100,
        )
    assert row_counts() == before


def test_meal_entry_add_refuses_unknown_meal(member, rice, row_counts):
    before = row_counts()
    with pytest.raises(InvalidValue) as error:
        meal_entry_add(
            business=member.business,
            member=member,
            date=TODAY,
            meal="brunch",
            food_id=rice.pk,
            grams=100,
        )
    assert error.value.field == "meal"
    assert row_counts() == before


@pytest.mark.parametrize("days", [-400, 45])
def test_meal_entry_add_refuses_dates_far_from_today(member, rice, row_counts, days):
    before = row_counts()
    with pytest.raises(InvalidValue) as error:
        meal_entry_add(
            business=member.business,
            member=member,
            date=TODAY + datetime.timedelta(days=days),
            meal="lunch",
            food_id=rice.pk,
            grams=100,
        )
    assert error.value.field == "date"
    assert row_counts() == before


def test_meal_entry_remove_deletes_own_entry(member, rice):
    entry = meal_entry_add(
        business=member.business,
        member=member,
        date=TODAY,
        meal="lunch",
        food_id=rice.pk,
        grams=100,
    )
    removed = meal_entry_remove(
        business=member.business, member=member, entry_id=entry.pk
    )
    assert removed.pk == entry.pk
    assert not MealEntry.objects.filter(pk=entry.pk).exists()


def test_meal_entry_remove_refuses_another_members_entry(member, rice, row_counts):
    other = MemberFactory(business=member.business)
    entry = meal_entry_add(
        business=member.business,
        member=other,
        date=TODAY,
        meal="lunch",
        food_id=rice.pk,
        grams=100,
    )
    before = row_counts()
    with pytest.raises(NotFound):
        meal_entry_remove(business=member.business, member=member, entry_id=entry.pk)
    assert row_counts() == before


def test_foods_search_ignores_case_and_accents(member):
    banana = FoodFactory(business=member.business, name="Plátano", aliases="banana")
    assert foods_search(business=member.business, query="PLATANO") == [banana]
    assert foods_search(business=member.business, query="banana") == [banana]


@pytest.mark.parametrize("query", ["d'higo", "d’higo", "D‘HIGO"])
def test_foods_search_reads_every_apostrophe_alike(member, query):
    """A phone types U+2019 where a keyboard types "'"."""
    cake = FoodFactory(business=member.business, name="Pan d’higo")
    assert foods_search(business=member.business, query=query) == [cake]


def test_foods_stored_with_a_typographic_apostrophe_are_found_after_migrating(
    member,
):
    """Foods whose search text was folded before U+2019 read as "'"."""
    from django.apps import apps

    refold = import_module(
        "gymnasia.nutrition.migrations.0002_search_text_apostrophes"
    ).refold
    cake = FoodFactory(business=member.business, name="Pan d’higo")
    Food.objects.filter(pk=cake.pk).update(search_text="pan d’higo")
    assert foods_search(business=member.business, query="d'higo") == []

    refold(apps, None)

    assert foods_search(business=member.business, query="d'higo") == [cake]


def test_foods_search_finds_every_variety(member, rice):
    brown = FoodFactory(
        business=member.business, name="Arroz integral (cocido)", aliases="arroz"
    )
    FoodFactory(business=member.business, name="Manzana")
    assert foods_search(business=member.business, query="arroz") == [rice, brown]
    assert foods_search(business=member.business, query="arroz integral") == [brown]


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("huevos", ["Clara de huevo", "Huevo entero"]),
        ("eggs", ["Clara de huevo", "Huevo entero"]),
        ("manzanas", ["Manzana"]),
        ("apples", ["Manzana"]),
        ("arroces", ["Arroz blanco (cocido)"]),
        ("tomatoes", ["Tomate"]),
        ("limones", ["Limón"]),
        ("huevos enteros", ["Huevo entero"]),
    ],
)
def test_foods_search_finds_a_food_by_its_plural(member, rice, query, found):
    """ "¿Cuántas proteínas tienen los huevos?" found nothing: the catalog
    says «huevo»."""
    for name, aliases in [
        ("Huevo entero", "huevo, egg"),
        ("Clara de huevo", "claras, egg white"),
        ("Manzana", "apple"),
        ("Tomate", "tomato"),
        ("Limón", "lemon"),
    ]:
        FoodFactory(business=member.business, name=name, aliases=aliases)

    foods = foods_search(business=member.business, query=query)

    assert [f.name for f in foods] == found


def test_foods_search_of_a_short_plural_looks_for_the_word_only(member):
    """ "Gas" is no plural of "ga", which would be in many a name."""
    FoodFactory(business=member.business, name="Gazpacho")
    assert foods_search(business=member.business, query="gas") == []


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("té", ["Té verde"]),
        ("pan de molde", ["Pan de molde"]),
        ("hi", []),
        ("a", []),
    ],
)
def test_foods_search_of_a_word_of_one_or_two_letters_looks_for_it(
    member, query, found
):
    """ "Té" and "de" failed the search (a handler error), where they are words
    like any other."""
    FoodFactory(business=member.business, name="Té verde")
    FoodFactory(business=member.business, name="Pan de molde")
    FoodFactory(business=member.business, name="Pan integral")
    FoodFactory(business=member.business, name="Tomate")

    foods = foods_search(business=member.business, query=query)

    assert [f.name for f in foods] == found


def test_foods_search_stays_in_its_business(member, rice):
    FoodFactory(business=BusinessFactory(), name="Arroz salvaje")
    assert foods_search(business=member.business, query="arroz") == [rice]


def test_foods_search_without_match_is_empty(member, rice):
    assert foods_search(business=member.business, query="caviar") == []


@pytest.mark.parametrize("query", ["", "   ", "x" * 101])
def test_foods_search_refuses_empty_or_long_queries(member, query):
    with pytest.raises(InvalidValue):
        foods_search(business=member.business, query=query)


def test_meal_diary_scales_nutrients_to_the_grams(member, rice):
    meal_entry_add(
        business=member.business,
        member=member,
        date=TODAY,
        meal="lunch",
        food_id=rice.pk,
        grams=150,
    )
    [line] = meal_diary(business=member.business, member=member, date=TODAY)
    assert line.carbohydrates == Decimal("42.0")
    assert line.kcal == Decimal("150.0")


def test_food_upsert_updates_in_place(member):
    food, created = food_upsert(
        business=member.business,
        name="Tofu",
        kcal_per_100g=Decimal("76"),
        carbohydrates_per_100g=Decimal("1.9"),
        protein_per_100g=Decimal("8"),
        fat_per_100g=Decimal("4.8"),
    )
    again, created_again = food_upsert(
        business=member.business,
        name="Tofu",
        aliases="soja",
        kcal_per_100g=Decimal("80"),
        carbohydrates_per_100g=Decimal("1.9"),
        protein_per_100g=Decimal("8"),
        fat_per_100g=Decimal("4.8"),
    )
    again.refresh_from_db()
    assert (created, created_again, again.pk) == (True, False, food.pk)
    assert again.kcal_per_100g == Decimal("80")
    assert foods_search(business=member.business, query="soja") == [again]


def test_food_upsert_refuses_negative_nutrients(member, row_counts):
    before = row_counts()
    with pytest.raises(InvalidValue):
        food_upsert(
            business=member.business,
            name="Wrong",
            kcal_per_100g=Decimal("-1"),
            carbohydrates_per_100g=Decimal("0"),
            protein_per_100g=Decimal("0"),
            fat_per_100g=Decimal("0"),
        )
    assert row_counts() == before
