"""The gym's assistants: agents, with their provider, persona and widget settings."""

from __future__ import annotations

import secrets

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Language
from tools.crypto import decrypt


def new_public_key() -> str:
    return f"ag_{secrets.token_urlsafe(18)}"


class Agent(models.Model):
    """An assistant of one gym, as its owner configured it."""

    class Provider(models.TextChoices):
        OFFLINE = "offline", _("Offline demo model")
        OPENAI = "openai", _("OpenAI")
        ANTHROPIC = "anthropic", _("Anthropic")
        GOOGLE = "google", _("Google")

    business = models.ForeignKey(
        Business,
        on_delete=models.CASCADE,
        related_name="agents",
        verbose_name=_("business"),
    )
    name = models.CharField(_("name"), max_length=120)
    language = models.CharField(
        _("language"), max_length=2, choices=Language.choices, default=Language.SPANISH
    )
    instructions = models.TextField(
        _("instructions"),
        blank=True,
        help_text=_("The assistant's persona and the gym's own guidance."),
    )
    provider = models.CharField(
        _("provider"), max_length=10, choices=Provider.choices, default=Provider.OFFLINE
    )
    model = models.CharField(
        _("model"),
        max_length=100,
        blank=True,
        help_text=_("Empty means the provider's default."),
    )
    max_tool_steps = models.PositiveSmallIntegerField(
        _("maximum tool steps per turn"),
        default=6,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
    )
    public_key = models.CharField(
        _("public key"),
        max_length=40,
        unique=True,
        default=new_public_key,
        editable=False,
    )
    identity_secret_encrypted = models.TextField(
        _("identity secret (encrypted)"), editable=False
    )
    allowed_origins = models.TextField(
        _("allowed origins"),
        blank=True,
        help_text=_(
            "Sites that may embed the widget, one per line, e.g. https://gym.example."
        ),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("agent")
        verbose_name_plural = _("agents")
        ordering = ["business", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def identity_secret(self) -> str:
        return decrypt(self.identity_secret_encrypted)

    def origins(self) -> list[str]:
        return [
            line.strip() for line in self.allowed_origins.splitlines() if line.strip()
        ]
