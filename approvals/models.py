"""Staff's decisions on requests: the calls that paused for approval.

A request is a tool call waiting on its own row (``tools.models.ToolCallLog``,
``pending_approval`` until decided); what waits and what it became is the call's
state, which ``tools`` owns. What ``approvals`` keeps is the decision: who, when,
why, and what a correction changed.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business
from tools.models import ToolCallLog


class Decision(models.Model):
    """What became of one request: approved, rejected, corrected into a new
    request, or expired (nobody decided in time). One per request, written in the
    same transaction as the call's change of state."""

    class Kind(models.TextChoices):
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")
        SUPERSEDED = "superseded", _("Corrected")
        EXPIRED = "expired", _("Expired")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    call = models.OneToOneField(
        ToolCallLog,
        on_delete=models.PROTECT,
        related_name="decision",
        verbose_name=_("request"),
    )
    kind = models.CharField(_("decision"), max_length=12, choices=Kind.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(_("decided at"), default=timezone.now)
    reason = models.TextField(_("reason"), blank=True)
    #: A correction: the new request staff made of this one, and what changed
    #: (``{argument: [before, after]}``).
    corrected_to = models.OneToOneField(
        ToolCallLog,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="corrects",
        verbose_name=_("corrected into"),
    )
    difference = models.JSONField(_("changes"), default=dict, blank=True)
    #: An approved request: when the member was told its outcome (once).
    told_at = models.DateTimeField(_("outcome told at"), null=True, blank=True)

    class Meta:
        verbose_name = _("decision")
        verbose_name_plural = _("decisions")
        ordering = ["-decided_at"]
        indexes = [
            # The sweep's look for approved requests not yet told.
            models.Index(
                fields=["decided_at"],
                condition=models.Q(kind="approved", told_at__isnull=True),
                name="decision_untold",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} @ {self.decided_at:%Y-%m-%d %H:%M}"
