"""The gym's assistants: agents, with their provider, persona and widget settings."""

from __future__ import annotations

import secrets
import uuid

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Language, Member
from gymnasia.when import when_written
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
        validators=[MinValueValidator(1), MaxValueValidator(50)],
    )
    history_turns = models.PositiveSmallIntegerField(
        _("turns of history sent to the model"),
        default=40,
        validators=[MinValueValidator(1), MaxValueValidator(500)],
        help_text=_(
            "The model reads the member's last this many messages, with what "
            "followed each. Older messages stay in the conversation and its log."
        ),
    )
    max_output_tokens = models.PositiveIntegerField(
        _("longest step, in tokens"),
        default=8192,
        validators=[MinValueValidator(256), MaxValueValidator(128_000)],
        help_text=_(
            "The most the model may write in one step, its reasoning included: "
            "reasoning models (OpenAI's GPT-5, Gemini 2.5) spend part of it "
            "thinking, and a step that runs out of it is not answered. Keep it "
            "within the chosen model's own maximum."
        ),
    )
    monthly_budget = models.DecimalField(
        _("monthly budget"),
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text=_(
            "The most the model may cost in a calendar month, in the budget's "
            "currency. Empty: no limit in money."
        ),
    )
    monthly_budget_currency = models.CharField(
        _("budget currency"),
        max_length=3,
        default="USD",
        help_text=_(
            "Three letters (ISO 4217). Only steps priced in this currency count "
            "towards the budget in money."
        ),
    )
    monthly_token_budget = models.PositiveBigIntegerField(
        _("monthly budget in tokens"),
        null=True,
        blank=True,
        help_text=_(
            "The most input and output tokens the model may use in a calendar "
            "month. Empty: no limit in tokens."
        ),
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


class Channel(models.TextChoices):
    """Where a member talks to an agent."""

    WIDGET = "widget", _("Widget")
    WHATSAPP = "whatsapp", _("WhatsApp")


class Conversation(models.Model):
    """A member's (or an anonymous visitor's) conversation with one agent."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(
        Agent,
        on_delete=models.CASCADE,
        related_name="conversations",
        verbose_name=_("agent"),
    )
    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    member = models.ForeignKey(
        Member,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="conversations",
        verbose_name=_("member"),
    )
    language = models.CharField(_("language"), max_length=2, choices=Language.choices)
    created_at = models.DateTimeField(_("created at"), default=timezone.now)
    channel = models.CharField(
        _("channel"), max_length=10, choices=Channel.choices, default=Channel.WIDGET
    )
    #: On WhatsApp: the sender's number (E.164) and when they last wrote, which
    #: opens the 24 hours a free-form reply may be sent in.
    wa_id = models.CharField(_("WhatsApp number"), max_length=32, blank=True)
    last_inbound_at = models.DateTimeField(
        _("member's last message"), null=True, blank=True
    )
    #: Who runs a turn of the conversation now, and until when (its lease, renewed
    #: at each step): one turn at a time, across processes (``agents.serial``).
    turn_holder = models.CharField(_("turn held by"), max_length=32, blank=True)
    turn_until = models.DateTimeField(_("turn held until"), null=True, blank=True)

    class Meta:
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["business", "created_at"])]
        constraints = [
            # One WhatsApp conversation per agent, number and member (or none).
            models.UniqueConstraint(
                fields=["agent", "wa_id", "member"],
                condition=models.Q(channel="whatsapp", member__isnull=False),
                name="whatsapp_conversation_member",
            ),
            models.UniqueConstraint(
                fields=["agent", "wa_id"],
                condition=models.Q(channel="whatsapp", member__isnull=True),
                name="whatsapp_conversation_visitor",
            ),
        ]

    def __str__(self) -> str:
        who = str(self.member) if self.member_id else gettext("anonymous visitor")
        return f"{who} · {when_written(self.created_at)}"


class Message(models.Model):
    """One entry of a conversation, stored in a provider-neutral shape.

    Members see ``member``, ``assistant`` and ``notice`` messages. ``step`` (a model
    step that proposed tool calls, with its text and what the provider needs echoed)
    and ``tool_results`` (the results sent back, by call id) are the turn's working
    history, kept so that any provider can continue the conversation.
    """

    class Role(models.TextChoices):
        MEMBER = "member", _("Member")
        ASSISTANT = "assistant", _("Assistant")
        NOTICE = "notice", _("Notice")
        STEP = "step", _("Model step")
        TOOL_RESULTS = "tool_results", _("Tool results")

    VISIBLE = (Role.MEMBER, Role.ASSISTANT, Role.NOTICE)

    conversation = models.ForeignKey(
        Conversation,
        on_delete=models.CASCADE,
        related_name="messages",
        verbose_name=_("conversation"),
        # The index on (conversation, id) below serves every lookup by
        # conversation; one on the conversation alone only slowed each insert.
        db_index=False,
    )
    # The id the conversation API gives: opaque, so that no one reads from it how
    # many messages the installation holds (the row's own id is a counter of
    # every gym's). Pages are still in the order of the rows' ids.
    public_id = models.UUIDField(
        _("public id"), default=uuid.uuid4, unique=True, editable=False
    )
    role = models.CharField(_("role"), max_length=12, choices=Role.choices)
    text = models.TextField(_("text"), blank=True)
    content = models.JSONField(_("content"), default=dict, blank=True)
    created_at = models.DateTimeField(_("created at"), default=timezone.now)
    # A model step's (``step`` and ``assistant``) model and the tokens its
    # provider billed; empty on other rows and where the provider said nothing.
    model = models.CharField(_("model"), max_length=100, blank=True)
    input_tokens = models.PositiveIntegerField(_("input tokens"), null=True, blank=True)
    cached_input_tokens = models.PositiveIntegerField(
        _("cached input tokens"), null=True, blank=True
    )
    cache_write_tokens = models.PositiveIntegerField(
        _("input tokens written to the cache"), null=True, blank=True
    )
    output_tokens = models.PositiveIntegerField(
        _("output tokens"), null=True, blank=True
    )

    class Meta:
        verbose_name = _("message")
        verbose_name_plural = _("messages")
        ordering = ["id"]
        indexes = [
            models.Index(fields=["conversation", "id"]),
            # The member's messages, which open the turns: a turn's bounds found
            # at once however long its conversation (the inbox's excerpts).
            models.Index(
                fields=["conversation", "id"],
                condition=models.Q(role="member"),
                name="agents_message_member_asks",
            ),
            # The Panel's days: members' messages and model steps by time. On
            # PostgreSQL it also holds what the Panel sums (migration 0012), so
            # a period is read from the index alone.
            models.Index(
                fields=["created_at"],
                condition=models.Q(role="member") | ~models.Q(model=""),
                name="message_panel",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_role_display()}: {self.text[:60]}"


class ModelPrice(models.Model):
    """What a model's tokens cost the business, per million, as its owner set it.

    A model with no price of the business's own is priced at the list prices
    shipped with Gymnasia (``agents.usage.LIST_PRICES``, with their date); a model
    in neither has an unknown cost, never a guessed one.
    """

    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    model = models.CharField(
        _("model"),
        max_length=100,
        help_text=_("As the agents name it, e.g. gpt-5-mini or claude-sonnet-4-5."),
    )
    currency = models.CharField(
        _("currency"),
        max_length=3,
        default="USD",
        help_text=_("Three letters (ISO 4217), as the provider bills: usually USD."),
    )
    input = models.DecimalField(
        _("input, per million tokens"), max_digits=10, decimal_places=4
    )
    cached_input = models.DecimalField(
        _("cached input, per million tokens"), max_digits=10, decimal_places=4
    )
    cache_write = models.DecimalField(
        _("input written to the cache, per million tokens"),
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        help_text=_("Empty where writing to the cache costs what input costs."),
    )
    output = models.DecimalField(
        _("output, per million tokens"), max_digits=10, decimal_places=4
    )

    class Meta:
        verbose_name = _("model price")
        verbose_name_plural = _("model prices")
        ordering = ["business", "model"]
        constraints = [
            models.UniqueConstraint(
                fields=["business", "model"], name="one_price_per_model"
            )
        ]

    def __str__(self) -> str:
        return self.model


class BudgetAlert(models.Model):
    """An agent's month reached a share of its budget (80 or 100 %): recorded
    once, and its owners mailed of it (``agents.budget_alerts``)."""

    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, related_name="+", verbose_name=_("agent")
    )
    month = models.DateField(_("month"))
    percent = models.PositiveSmallIntegerField(_("share of the budget (%)"))
    created_at = models.DateTimeField(_("created at"), default=timezone.now)

    class Meta:
        verbose_name = _("budget alert")
        verbose_name_plural = _("budget alerts")
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "month", "percent"], name="budget_alert_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.agent} · {self.month:%Y-%m} · {self.percent} %"


# The WhatsApp channel's models live with the channel (``agents.whatsapp``).
from agents.whatsapp.models import (  # noqa: E402
    WhatsAppChannel,
    WhatsAppInbound,
    WhatsAppReply,
)

__all__ = [
    "Agent",
    "BudgetAlert",
    "Channel",
    "Conversation",
    "Message",
    "ModelPrice",
    "WhatsAppChannel",
    "WhatsAppInbound",
    "WhatsAppReply",
]
