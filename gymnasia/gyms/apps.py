from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GymsConfig(AppConfig):
    name = "gymnasia.gyms"
    label = "gyms"
    verbose_name = _("Gyms")
