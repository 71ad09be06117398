"""The food catalog of each gym and its members' meal diaries."""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Member

_non_negative = [MinValueValidator(Decimal("0"))]


class Food(models.Model):
    """A food of the gym's catalog, with its nutrients per 100 g."""

    business = models.ForeignKey(
        Business,
        on_delete=models.CASCADE,
        related_name="foods",
        verbose_name=_("business"),
    )
    name = models.CharField(_("name"), max_length=200)
    aliases = models.CharField(
        _("aliases"),
        max_length=500,
        blank=True,
        help_text=_("Other names members use for it, separated by commas."),
    )
    kcal_per_100g = models.DecimalField(
        _("kcal per 100 g"), max_digits=6, decimal_places=1, validators=_non_negative
    )
    carbohydrates_per_100g = models.DecimalField(
        _("carbohydrates (g) per 100 g"),
        max_digits=5,
        decimal_places=1,
        validators=_non_negative,
    )
    protein_per_100g = models.DecimalField(
        _("protein (g) per 100 g"),
        max_digits=5,
        decimal_places=1,
        validators=_non_negative,
    )
    fat_per_100g = models.DecimalField(
        _("fat (g) per 100 g"), max_digits=5, decimal_places=1, validators=_non_negative
    )
    search_text = models.CharField(max_length=800, editable=False, db_index=True)

    class Meta:
        verbose_name = _("food")
        verbose_name_plural = _("foods")
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["business", "name"], name="food_unique_name"
            )
        ]

    def __str__(self) -> str:
        return self.name


class Meal(models.TextChoices):
    BREAKFAST = "breakfast", _("Breakfast")
    LUNCH = "lunch", _("Lunch")
    DINNER = "dinner", _("Dinner")
    SNACK = "snack", _("Snack")


class MealEntry(models.Model):
    """A food a member ate, in grams, in one meal of one day."""

    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    member = models.ForeignKey(
        Member,
        on_delete=models.CASCADE,
        related_name="meal_entries",
        verbose_name=_("member"),
    )
    date = models.DateField(_("date"))
    meal = models.CharField(_("meal"), max_length=10, choices=Meal.choices)
    food = models.ForeignKey(
        Food, on_delete=models.PROTECT, related_name="entries", verbose_name=_("food")
    )
    grams = models.DecimalField(_("grams"), max_digits=6, decimal_places=1)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("meal entry")
        verbose_name_plural = _("meal entries")
        ordering = ["date", "meal", "created_at"]
        indexes = [models.Index(fields=["member", "date"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(grams__gt=0), name="mealentry_grams_positive"
            )
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.get_meal_display()}: {self.food} {self.grams} g"
