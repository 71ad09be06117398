"""Reads of the food catalog and of meal diaries."""

from __future__ import annotations

import datetime
import functools
import operator
import re
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Q
from django.utils.translation import gettext as _

from gymnasia.errors import InvalidValue
from gymnasia.gyms.models import Business, Member
from gymnasia.nutrition.models import Food, MealEntry
from gymnasia.text import fold

MAX_QUERY_LENGTH = 100


def foods_search(*, business: Business, query: str, limit: int = 10) -> list[Food]:
    """Foods of the gym's catalog whose name or aliases contain every word of the query.

    Matching ignores case and accents, so «platano» finds «Plátano», and a word
    in the plural also matches its singular, so «huevos» and "eggs" find «Huevo».
    """
    words = fold(query).split()
    if not words:
        raise InvalidValue(
            _("The search needs at least one word."), field="query", code="empty"
        )
    if len(query) > MAX_QUERY_LENGTH:
        raise InvalidValue(
            _("The search can have at most %(max)s characters.")
            % {"max": MAX_QUERY_LENGTH},
            field="query",
            code="too_long",
            params={"max": MAX_QUERY_LENGTH},
        )
    qs = Food.objects.filter(business=business)
    for word in words:
        qs = qs.filter(_matching(word))
    return list(qs.order_by("name")[:limit])


def _matching(word: str) -> Q:
    """Foods a (folded) word of a search finds: any that contain it or a singular
    it may be the plural of; a word of one or two letters ("té", "de") only as a
    whole word, since as a part of one it is in most names."""
    if len(word) < 3:
        pattern = f"(^|[^a-z0-9]){re.escape(word)}([^a-z0-9]|$)"
        return Q(search_text__regex=pattern)
    return functools.reduce(
        operator.or_, (Q(search_text__contains=f) for f in _forms(word))
    )


def _forms(word: str) -> list[str]:
    """A (folded) word of a search, and the singulars it may be the plural of,
    in Spanish or English ("huevos": "huevo"; "limones": "limon"; "arroces":
    "arroz"; "eggs": "egg"); none shorter than three letters."""
    forms = [word]
    if len(word) > 3 and word.endswith("s"):
        forms.append(word[:-1])
        if word.endswith("es"):
            forms.append(word[:-2])
        if word.endswith("ces"):
            forms.append(word[:-3] + "z")
    return [f for f in forms if len(f) >= 3]


@dataclass(frozen=True)
class DiaryLine:
    entry: MealEntry
    kcal: Decimal
    carbohydrates: Decimal
    protein: Decimal
    fat: Decimal


def _scaled(per_100g: Decimal, grams: Decimal) -> Decimal:
    return (per_100g * grams / Decimal(100)).quantize(Decimal("0.1"))


def meal_diary(
    *, business: Business, member: Member, date: datetime.date
) -> list[DiaryLine]:
    """The member's entries of one day, each with the nutrients of its grams."""
    entries = (
        MealEntry.objects.filter(business=business, member=member, date=date)
        .select_related("food")
        .order_by("created_at", "pk")
    )
    return [
        DiaryLine(
            entry=e,
            kcal=_scaled(e.food.kcal_per_100g, e.grams),
            carbohydrates=_scaled(e.food.carbohydrates_per_100g, e.grams),
            protein=_scaled(e.food.protein_per_100g, e.grams),
            fat=_scaled(e.food.fat_per_100g, e.grams),
        )
        for e in entries
    ]
