from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ToolsConfig(AppConfig):
    """The tool registry, integrations, dispatcher and the verification log."""

    name = "tools"
    verbose_name = _("Tools")
