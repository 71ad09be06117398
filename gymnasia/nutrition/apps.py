from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NutritionConfig(AppConfig):
    name = "gymnasia.nutrition"
    label = "nutrition"
    verbose_name = _("Nutrition")
