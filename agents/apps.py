from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AgentsConfig(AppConfig):
    """Agents, conversations, the turn loop and the provider adapters."""

    name = "agents"
    verbose_name = _("Agents")

    def ready(self) -> None:
        # Connects the receiver of django-cors-headers' signal.
        from agents import cors  # noqa: F401
