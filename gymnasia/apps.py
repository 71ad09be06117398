from pathlib import Path

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.utils.translation import gettext_lazy as _


class GymnasiaConfig(AppConfig):
    """The project package itself: home page and the project's commands."""

    name = "gymnasia"
    verbose_name = _("Gymnasia")

    def ready(self) -> None:
        from gymnasia.middleware import check_protections

        checks.register(check_protections, checks.Tags.security, deploy=True)
        # The embedded default keeps its SQLite file in a folder that a fresh
        # clone does not have yet.
        database = settings.DATABASES["default"]
        if database["ENGINE"].endswith("sqlite3") and database["NAME"] != ":memory:":
            Path(database["NAME"]).parent.mkdir(parents=True, exist_ok=True)
