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


def check_encryption_keys(**kwargs: Any) -> list[checks.CheckMessage]:
    """Every key of ``FIELD_ENCRYPTION_KEYS`` is a Fernet key (R12): a bad one
    is said at start-up, not at the first secret stored or read."""
    from cryptography.fernet import Fernet
    from django.conf import settings

    errors: list[checks.CheckMessage] = []
    for position, key in enumerate(settings.FIELD_ENCRYPTION_KEYS, start=1):
        try:
            Fernet(key.encode())
        except ValueError:
            errors.append(
                checks.Error(
                    f"FIELD_ENCRYPTION_KEYS: key {position} is not a Fernet key "
                    "(32 bytes in URL-safe base64, as Fernet.generate_key() makes).",
                    id="tools.E002",
                )
            )
    return errors


class ToolsConfig(AppConfig):
    """The tool registry, integrations, dispatcher and the verification log."""

    name = "tools"
    verbose_name = _("Tools")

    def ready(self) -> None:
        checks.register(check_tool_registry)
        checks.register(check_encryption_keys, checks.Tags.security)
