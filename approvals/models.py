"""Pending actions: gated writes waiting for a decision by the gym's staff."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Member
from tools.models import ToolCallLog


class PendingAction(models.Model):
    """A write the model proposed that waits for staff, bound to the exact call."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    member = models.ForeignKey(
        Member,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("member"),
    )
    conversation_key = models.CharField(_("conversation"), max_length=64, db_index=True)
    tool_name = models.CharField(_("tool"), max_length=100)
    arguments = models.JSONField(_("arguments"))
    action_key = models.CharField(_("action key"), max_length=64)
    tool_call = models.OneToOneField(
        ToolCallLog,
        on_delete=models.PROTECT,
        related_name="pending_action",
        verbose_name=_("tool call"),
    )
    status = models.CharField(
        _("status"), max_length=12, choices=Status.choices, default=Status.PENDING
    )
    requested_at = models.DateTimeField(_("requested at"), default=timezone.now)

    class Meta:
        verbose_name = _("pending action")
        verbose_name_plural = _("pending actions")
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.get_status_display()})"
