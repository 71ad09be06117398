from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GymnasiaConfig(AppConfig):
    """The project package itself: home page and the project's commands."""

    name = "gymnasia"
    verbose_name = _("Gymnasia")
