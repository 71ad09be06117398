"""Pending actions: gated writes waiting for a decision by the gym's staff, and the
append-only trail of everything that happened to each of them."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Member
from tools.models import ToolCallLog


class PendingAction(models.Model):
    """A write the model proposed that waits for staff, bound to the exact call.

    Its status only moves forward, each step a compare-and-set in the database:
    pending → approved → executing → succeeded | failed | unknown, or pending →
    rejected | expired | superseded.
    """

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")
        EXPIRED = "expired", _("Expired")
        SUPERSEDED = "superseded", _("Superseded")
        EXECUTING = "executing", _("Executing")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        UNKNOWN = "unknown", _("Unknown outcome")

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
    execution = models.OneToOneField(
        ToolCallLog,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="approved_action",
        verbose_name=_("execution"),
    )
    status = models.CharField(
        _("status"), max_length=12, choices=Status.choices, default=Status.PENDING
    )
    requested_at = models.DateTimeField(_("requested at"), default=timezone.now)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)
    #: The owner's "never more than" for the tool when it was asked: a correction
    #: by staff is bounded by it as the member's request was.
    max_amount = models.DecimalField(
        _("never more than"), max_digits=12, decimal_places=2, null=True, blank=True
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(_("decided at"), null=True, blank=True)
    decision_reason = models.TextField(_("reason"), blank=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    outcome = models.JSONField(_("outcome"), default=dict, blank=True)

    class Meta:
        verbose_name = _("pending action")
        verbose_name_plural = _("pending actions")
        ordering = ["-requested_at"]
        indexes = [
            models.Index(fields=["business", "status", "requested_at"]),
            models.Index(fields=["status", "expires_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.get_status_display()})"


class PendingActionEvent(models.Model):
    """One thing that happened to a pending action: who did what, when. Rows are
    only ever added (there is no service that changes or removes one)."""

    action = models.ForeignKey(
        PendingAction,
        on_delete=models.CASCADE,
        related_name="events",
        verbose_name=_("pending action"),
    )
    kind = models.CharField(_("event"), max_length=20)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("actor"),
    )
    parameters = models.JSONField(_("parameters"), default=dict, blank=True)
    created_at = models.DateTimeField(_("created at"), default=timezone.now)

    class Meta:
        verbose_name = _("pending action event")
        verbose_name_plural = _("pending action events")
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.kind} @ {timezone.localtime(self.created_at):%Y-%m-%d %H:%M:%S}"
