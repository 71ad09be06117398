"""The built-in ``nutrition`` integration: the gym's catalog and meal diaries."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from gymnasia.gyms.models import Member
from gymnasia.nutrition.models import Food, MealEntry
from gymnasia.nutrition.selectors import foods_search, meal_diary
from gymnasia.nutrition.services import meal_entry_add, meal_entry_remove
from tools.integrations.builtin import BuiltinClient, number


def _food(food: Food) -> dict[str, Any]:
    return {
        "food_id": food.pk,
        "name": food.name,
        "per_100g": {
            "kcal": number(food.kcal_per_100g),
            "carbohydrates_g": number(food.carbohydrates_per_100g),
            "protein_g": number(food.protein_per_100g),
            "fat_g": number(food.fat_per_100g),
        },
    }


def _entry(entry: MealEntry) -> dict[str, Any]:
    return {
        "entry_id": entry.pk,
        "date": entry.date.isoformat(),
        "meal": entry.meal,
        "food_id": entry.food_id,
        "food": entry.food.name,
        "grams": number(entry.grams),
    }


class NutritionClient(BuiltinClient):
    kind = "nutrition"
    writes = frozenset({"add_meal_entry", "remove_meal_entry"})

    def search_foods(self, *, query: str, limit: int = 10) -> list[dict[str, Any]]:
        foods = self._read(
            lambda: foods_search(business=self.business, query=query, limit=limit)
        )
        return [_food(food) for food in foods]

    def meal_diary(
        self, *, member: Member, date: datetime.date
    ) -> list[dict[str, Any]]:
        lines = self._read(
            lambda: meal_diary(business=self.business, member=member, date=date)
        )
        return [
            {
                **_entry(line.entry),
                "kcal": number(line.kcal),
                "carbohydrates_g": number(line.carbohydrates),
                "protein_g": number(line.protein),
                "fat_g": number(line.fat),
            }
            for line in lines
        ]

    def add_meal_entry(
        self,
        *,
        member: Member,
        date: datetime.date,
        meal: str,
        food_id: int,
        grams: Decimal | float | int,
    ) -> dict[str, Any]:
        entry = self._write(
            lambda: meal_entry_add(
                business=self.business,
                member=member,
                date=date,
                meal=meal,
                food_id=food_id,
                grams=grams,
            )
        )
        return _entry(entry)

    def remove_meal_entry(self, *, member: Member, entry_id: int) -> dict[str, Any]:
        entry = self._write(
            lambda: meal_entry_remove(
                business=self.business, member=member, entry_id=entry_id
            )
        )
        return _entry(entry)

    def find_meal_entry(
        self, *, member: Member, entry_id: int
    ) -> dict[str, Any] | None:
        entry = self._read(
            lambda: (
                MealEntry.objects.select_related("food")
                .filter(business=self.business, member=member, pk=entry_id)
                .first()
            )
        )
        return _entry(entry) if entry is not None else None
