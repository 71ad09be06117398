"""Changes to the food catalog and to members' meal diaries."""

from __future__ import annotations

import datetime
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils.translation import gettext as _

from gymnasia.errors import InvalidValue, NotFound
from gymnasia.gyms.models import Business, Member
from gymnasia.gyms.selectors import business_today
from gymnasia.nutrition.models import Food, Meal, MealEntry
from gymnasia.text import fold

MAX_GRAMS_PER_ENTRY = Decimal("5000")
DIARY_DAYS_BACK = 365
DIARY_DAYS_AHEAD = 30


def food_search_text(*, name: str, aliases: str) -> str:
    """The folded text a food is found by: its name and its aliases."""
    return fold(f"{name} {aliases.replace(',', ' ')}")


def food_upsert(
    *,
    business: Business,
    name: str,
    kcal_per_100g: Decimal,
    carbohydrates_per_100g: Decimal,
    protein_per_100g: Decimal,
    fat_per_100g: Decimal,
    aliases: str = "",
) -> tuple[Food, bool]:
    """Create the food, or bring an existing one of that name up to date."""
    nutrients = {
        "kcal_per_100g": kcal_per_100g,
        "carbohydrates_per_100g": carbohydrates_per_100g,
        "protein_per_100g": protein_per_100g,
        "fat_per_100g": fat_per_100g,
    }
    for field, amount in nutrients.items():
        if amount < 0:
            raise InvalidValue(
                _("Nutrient values cannot be negative."),
                field=field,
                code="at_least",
                params={"limit": 0},
            )
    values: dict[str, object] = {
        **nutrients,
        "aliases": aliases,
        "search_text": food_search_text(name=name, aliases=aliases),
    }
    food, created = Food.objects.get_or_create(
        business=business, name=name, defaults=values
    )
    if not created:
        changed = [f for f, v in values.items() if getattr(food, f) != v]
        if changed:
            for field in changed:
                setattr(food, field, values[field])
            food.save(update_fields=changed)
    return food, created


def _grams(value: Decimal | int | float | str) -> Decimal:
    if isinstance(value, bool):
        raise InvalidValue(
            _("Grams must be a number."), field="grams", code="wrong_type"
        )
    try:
        grams = Decimal(str(value)).quantize(Decimal("0.1"))
    except (InvalidOperation, ValueError):
        raise InvalidValue(
            _("Grams must be a number."), field="grams", code="wrong_type"
        ) from None
    if not grams.is_finite() or grams <= 0:
        raise InvalidValue(
            _("Grams must be more than zero."),
            field="grams",
            code="more_than",
            params={"limit": 0},
        )
    if grams > MAX_GRAMS_PER_ENTRY:
        raise InvalidValue(
            _("At most %(max)s g can be logged in one entry.")
            % {"max": MAX_GRAMS_PER_ENTRY},
            field="grams",
            code="at_most",
            params={"limit": MAX_GRAMS_PER_ENTRY},
        )
    return grams


def _check_member(business: Business, member: Member) -> None:
    if member.business_id != business.pk:
        raise NotFound(_("No such member."), field="member", code="member_not_found")


def meal_entry_add(
    *,
    business: Business,
    member: Member,
    date: datetime.date,
    meal: str,
    food_id: int,
    grams: Decimal | int | float | str,
) -> MealEntry:
    """Log grams of a catalog food in one of the member's meals."""
    _check_member(business, member)
    if meal not in Meal.values:
        raise InvalidValue(
            _("Meal must be one of: %(meals)s.") % {"meals": ", ".join(Meal.values)},
            field="meal",
            code="not_one_of",
            params={"choices": list(Meal.values)},
        )
    amount = _grams(grams)
    today = business_today(business=business)
    if not (
        today - datetime.timedelta(days=DIARY_DAYS_BACK)
        <= date
        <= today + datetime.timedelta(days=DIARY_DAYS_AHEAD)
    ):
        raise InvalidValue(
            _("The diary takes dates from %(back)s days ago to %(ahead)s days ahead.")
            % {"back": DIARY_DAYS_BACK, "ahead": DIARY_DAYS_AHEAD},
            field="date",
            code="outside_diary_days",
            params={"back": DIARY_DAYS_BACK, "ahead": DIARY_DAYS_AHEAD},
        )
    food = Food.objects.filter(business=business, pk=food_id).first()
    if food is None:
        raise NotFound(
            _("No food with that id in this gym's catalog."),
            field="food_id",
            code="food_not_found",
        )
    return MealEntry.objects.create(
        business=business, member=member, date=date, meal=meal, food=food, grams=amount
    )


def meal_entry_remove(
    *, business: Business, member: Member, entry_id: int
) -> MealEntry:
    """Remove one of the member's own diary entries; return what was removed."""
    _check_member(business, member)
    with transaction.atomic():
        entry = (
            MealEntry.objects.select_for_update()
            .select_related("food")
            .filter(business=business, member=member, pk=entry_id)
            .first()
        )
        if entry is None:
            raise NotFound(
                _("No diary entry with that id for this member."),
                field="entry_id",
                code="entry_not_found",
            )
        removed_id = entry.pk
        entry.delete()
        entry.pk = removed_id
    return entry
