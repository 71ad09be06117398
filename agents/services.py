"""Changes to agents."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.utils.translation import gettext as _

from agents.models import Agent
from gymnasia.errors import InvalidValue
from gymnasia.gyms.models import Business
from tools.crypto import encrypt

PROVIDER_KEYS: dict[str, str] = {
    Agent.Provider.OPENAI: "OPENAI_API_KEY",
    Agent.Provider.ANTHROPIC: "ANTHROPIC_API_KEY",
    Agent.Provider.GOOGLE: "GOOGLE_API_KEY",
}


def provider_missing_key(provider: str) -> str | None:
    """The environment variable a provider needs and lacks, or ``None``."""
    variable = PROVIDER_KEYS.get(provider)
    if variable and not getattr(settings, variable, ""):
        return variable
    return None


def identity_secret_new() -> str:
    """A new identity secret: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def agent_create(
    *,
    business: Business,
    name: str,
    language: str = "es",
    instructions: str = "",
    provider: str = Agent.Provider.OFFLINE,
    model: str = "",
    max_tool_steps: int = 6,
    allowed_origins: str = "",
) -> Agent:
    """Create an agent with a fresh public key and identity secret."""
    missing = provider_missing_key(provider)
    if missing:
        raise InvalidValue(
            _("This provider needs %(variable)s in the server's environment.")
            % {"variable": missing},
            field="provider",
        )
    return Agent.objects.create(
        business=business,
        name=name,
        language=language,
        instructions=instructions,
        provider=provider,
        model=model,
        max_tool_steps=max_tool_steps,
        allowed_origins=allowed_origins,
        identity_secret_encrypted=encrypt(identity_secret_new()),
    )
