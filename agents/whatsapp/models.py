"""The WhatsApp channel's records: the connection, what members sent, what was
sent back (imported by ``agents.models``, whose app they belong to)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from tools.crypto import decrypt


class WhatsAppChannel(models.Model):
    """An agent's WhatsApp Business number, as its owner connected it (R12: the
    secrets are encrypted, and written only)."""

    agent = models.OneToOneField(
        "agents.Agent",
        on_delete=models.CASCADE,
        related_name="whatsapp",
        verbose_name=_("agent"),
    )
    api_base = models.CharField(_("Graph API address"), max_length=200)
    phone_number_id = models.CharField(_("phone number id"), max_length=64, unique=True)
    business_account_id = models.CharField(
        _("WhatsApp business account id"), max_length=64
    )
    access_token_encrypted = models.TextField(_("access token (encrypted)"))
    app_secret_encrypted = models.TextField(_("app secret (encrypted)"))
    verify_token_encrypted = models.TextField(_("verify token (encrypted)"))
    template_name = models.CharField(
        _("outcome template"),
        max_length=512,
        blank=True,
        help_text=_(
            "An approved template with two body parameters: what the member "
            "asked, and what happened. Sent when the answer comes more than 24 "
            "hours after the member's last message. Empty: such answers wait in "
            "the conversation and staff are told."
        ),
    )
    template_language = models.CharField(
        _("template language"),
        max_length=15,
        default="es",
        help_text=_(
            "The template's language code in Meta's settings, e.g. es or en_US."
        ),
    )
    display_phone_number = models.CharField(
        _("number"), max_length=40, blank=True, editable=False
    )
    tested_at = models.DateTimeField(_("last tested"), null=True, editable=False)
    test_problem = models.TextField(_("test result"), blank=True, editable=False)
    created_at = models.DateTimeField(_("created at"), default=timezone.now)

    class Meta:
        verbose_name = _("WhatsApp channel")
        verbose_name_plural = _("WhatsApp channels")

    def __str__(self) -> str:
        return self.display_phone_number or self.phone_number_id

    @property
    def access_token(self) -> str:
        return decrypt(self.access_token_encrypted)

    @property
    def app_secret(self) -> str:
        return decrypt(self.app_secret_encrypted)

    @property
    def verify_token(self) -> str:
        return decrypt(self.verify_token_encrypted)


class WhatsAppInbound(models.Model):
    """A message a member sent, once per ``wamid`` however often Meta delivers
    it: the unique ``wamid`` is what runs one turn for it."""

    class State(models.TextChoices):
        QUEUED = "queued", _("Queued")
        TAKEN = "taken", _("Taken")
        DONE = "done", _("Done")

    channel = models.ForeignKey(
        WhatsAppChannel,
        on_delete=models.CASCADE,
        related_name="inbound",
        verbose_name=_("channel"),
    )
    wamid = models.CharField(_("WhatsApp message id"), max_length=255, unique=True)
    wa_id = models.CharField(_("sender"), max_length=32)
    kind = models.CharField(_("type"), max_length=20)
    text = models.TextField(_("text"), blank=True)
    sent_at = models.DateTimeField(_("sent at"))
    received_at = models.DateTimeField(_("received at"), default=timezone.now)
    state = models.CharField(
        _("state"), max_length=8, choices=State.choices, default=State.QUEUED
    )
    taken_at = models.DateTimeField(_("taken at"), null=True, blank=True)
    conversation = models.ForeignKey(
        "agents.Conversation",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("conversation"),
    )

    class Meta:
        verbose_name = _("WhatsApp message received")
        verbose_name_plural = _("WhatsApp messages received")

    def __str__(self) -> str:
        return self.wamid


class WhatsAppReply(models.Model):
    """One message sent to a member (a part of a reply, or a template), with
    what Meta said of it: accepted with its ``wamid``, then the statuses its
    webhook reports (never back from read to sent), or refused with a code."""

    class Kind(models.TextChoices):
        TEXT = "text", _("Text")
        TEMPLATE = "template", _("Template")

    class Status(models.TextChoices):
        PENDING = "pending", _("Not sent yet")
        SENDING = "sending", _("Being sent")
        ACCEPTED = "accepted", _("Accepted by WhatsApp")
        SENT = "sent", _("Sent")
        DELIVERED = "delivered", _("Delivered")
        READ = "read", _("Read")
        FAILED = "failed", _("Failed")
        REFUSED = "refused", _("Refused by WhatsApp")
        UNKNOWN = "unknown", _("Not known whether it arrived")
        NOT_SENT = "not_sent", _("Not sent")

    conversation = models.ForeignKey(
        "agents.Conversation",
        on_delete=models.CASCADE,
        related_name="whatsapp_replies",
        verbose_name=_("conversation"),
    )
    message = models.ForeignKey(
        "agents.Message",
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("message"),
    )
    part = models.PositiveSmallIntegerField(_("part"), default=0)
    kind = models.CharField(_("type"), max_length=10, choices=Kind.choices)
    body = models.TextField(_("text"), blank=True)
    wamid = models.CharField(
        _("WhatsApp message id"), max_length=255, null=True, blank=True, unique=True
    )
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.PENDING
    )
    error_code = models.IntegerField(_("error code"), null=True, blank=True)
    error_title = models.CharField(_("error"), max_length=300, blank=True)
    created_at = models.DateTimeField(_("created at"), default=timezone.now)
    status_at = models.DateTimeField(_("status at"), null=True, blank=True)

    class Meta:
        verbose_name = _("WhatsApp message sent")
        verbose_name_plural = _("WhatsApp messages sent")
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["message", "part"], name="whatsapp_reply_part_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} · {self.get_status_display()}"
