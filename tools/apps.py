from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.utils.translation import gettext_lazy as _


def check_tool_registry(**kwargs: Any) -> list[checks.CheckMessage]:
    """Published tools and handlers must match one to one (R2)."""
    from tools.registry import RegistryMismatch, published_registry

    try:
        published_registry()
    except RegistryMismatch as error:
        return [checks.Error(str(error), id="tools.E001")]
    return []


class ToolsConfig(AppConfig):
    """The tool registry, integrations, dispatcher and the verification log."""

    name = "tools"
    verbose_name = _("Tools")

    def ready(self) -> None:
        checks.register(check_tool_registry)
