from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from gymnasia.gyms.admin import BusinessScopedAdmin
from gymnasia.nutrition.models import Food, MealEntry
from gymnasia.nutrition.services import food_search_text


@admin.register(Food)
class FoodAdmin(BusinessScopedAdmin):
    list_display = [
        "name",
        "kcal_per_100g",
        "carbohydrates_per_100g",
        "protein_per_100g",
        "fat_per_100g",
        "business",
    ]
    search_fields = ["name", "aliases"]

    def save_model(
        self, request: HttpRequest, obj: Any, form: Any, change: bool
    ) -> None:
        obj.search_text = food_search_text(name=obj.name, aliases=obj.aliases)
        super().save_model(request, obj, form, change)


@admin.register(MealEntry)
class MealEntryAdmin(BusinessScopedAdmin):
    list_display = ["date", "meal", "member", "food", "grams"]
    list_filter = ["meal", "date", "food"]
    list_select_related = ["member", "food"]
    autocomplete_fields = ["member", "food"]
