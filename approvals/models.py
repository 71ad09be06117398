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

from gymnasia.gyms.models import Business, StaffRole
from tools.models import Handoff, ToolCallLog


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
            # A gym's decisions by time: the Panel's period, and each tool's
            # latest decisions (its readiness for automatic).
            models.Index(fields=["business", "decided_at"], name="decision_business"),
            # The sweep's look for approved requests not yet told.
            models.Index(
                fields=["decided_at"],
                condition=models.Q(kind="approved", told_at__isnull=True),
                name="decision_untold",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} @ {self.decided_at:%Y-%m-%d %H:%M}"


class Event(models.Model):
    """Something staff and the gym's own tools hear of: a request made or
    decided, a case opened or resolved. One per kind and subject (the unique
    constraints), so whoever records it first is the one who tells: a second
    sweep or a redelivered task finds it recorded and tells nobody again. Its id
    is the webhook event's id."""

    class Type(models.TextChoices):
        APPROVAL_REQUESTED = "approval.requested", _("Request made")
        APPROVAL_DECIDED = "approval.decided", _("Request decided")
        HANDOFF_OPENED = "handoff.opened", _("Handoff opened")
        HANDOFF_RESOLVED = "handoff.resolved", _("Handoff resolved")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    type = models.CharField(_("event"), max_length=32, choices=Type.choices)
    call = models.ForeignKey(
        ToolCallLog,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("request"),
    )
    handoff = models.ForeignKey(
        Handoff,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("handoff"),
    )
    data = models.JSONField(_("data"), default=dict)
    created_at = models.DateTimeField(_("created at"), default=timezone.now)

    class Meta:
        verbose_name = _("event")
        verbose_name_plural = _("events")
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["type", "call"],
                condition=models.Q(call__isnull=False),
                name="event_once_per_request",
            ),
            models.UniqueConstraint(
                fields=["type", "handoff"],
                condition=models.Q(handoff__isnull=False),
                name="event_once_per_handoff",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type} @ {self.created_at:%Y-%m-%d %H:%M:%S}"


class StaffNotice(models.Model):
    """One thing one staff member is to hear of by e-mail: a new request or case,
    a reminder of a request still waiting, or (to an owner) an overdue one.

    Notices of one person go out together, at most one mail a minute; a mail's
    links to decide a request are bound to its notice (``approvals.links``), so a
    link works once and only for the person it was sent to.
    """

    class Kind(models.TextChoices):
        REQUEST = "request", _("New request")
        HANDOFF = "handoff", _("New handoff")
        REMINDER = "reminder", _("Reminder")
        ESCALATION = "escalation", _("Overdue request")

    class Status(models.TextChoices):
        UNSENT = "unsent", _("Not sent yet")
        SENT = "sent", _("Sent")
        DROPPED = "dropped", _("Not sent: settled before it went out")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    role = models.ForeignKey(
        StaffRole,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("staff member"),
    )
    kind = models.CharField(_("kind"), max_length=12, choices=Kind.choices)
    call = models.ForeignKey(
        ToolCallLog,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("request"),
    )
    handoff = models.ForeignKey(
        Handoff,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("handoff"),
    )
    status = models.CharField(
        _("status"), max_length=8, choices=Status.choices, default=Status.UNSENT
    )
    created_at = models.DateTimeField(_("created at"), default=timezone.now)
    #: When a sender took it (a sender that stopped before sending leaves it to
    #: be taken again once this is old).
    claimed_at = models.DateTimeField(_("claimed at"), null=True, blank=True)
    sent_at = models.DateTimeField(_("sent at"), null=True, blank=True)
    #: When one of the mail's links decided the request (a link works once).
    used_at = models.DateTimeField(_("link used at"), null=True, blank=True)

    class Meta:
        verbose_name = _("staff notice")
        verbose_name_plural = _("staff notices")
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["role", "kind", "call"],
                condition=models.Q(call__isnull=False),
                name="notice_once_per_request",
            ),
            models.UniqueConstraint(
                fields=["role", "kind", "handoff"],
                condition=models.Q(handoff__isnull=False),
                name="notice_once_per_handoff",
            ),
        ]
        indexes = [
            models.Index(
                fields=["role", "created_at"],
                condition=models.Q(status="unsent"),
                name="notice_unsent",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} → {self.role.user}"


class WebhookEndpoint(models.Model):
    """An address of the gym's own tools (Slack, Teams, a CRM) that hears of
    events, signed with a secret only the gym and Gymnasia know."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    business = models.ForeignKey(
        Business,
        on_delete=models.CASCADE,
        related_name="webhook_endpoints",
        verbose_name=_("business"),
    )
    url = models.URLField(_("address"), max_length=500)
    description = models.CharField(_("description"), max_length=200, blank=True)
    #: The event types it hears of; empty means all.
    events = models.JSONField(_("events"), default=list, blank=True)
    secret_encrypted = models.TextField(_("signing secret (encrypted)"))
    active = models.BooleanField(_("active"), default=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("webhook endpoint")
        verbose_name_plural = _("webhook endpoints")
        ordering = ["business", "url"]

    def __str__(self) -> str:
        from approvals.webhooks import webhook_url_masked  # it reads this model

        # The address may be a credential itself (Slack puts one in the path).
        return self.description or webhook_url_masked(self.url)


class WebhookDelivery(models.Model):
    """One event sent to one endpoint: its tries and how they ended."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Being delivered")
        DELIVERED = "delivered", _("Delivered")
        FAILED = "failed", _("Given up")
        REFUSED = "refused", _("Refused: not an address webhooks may use")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    endpoint = models.ForeignKey(
        WebhookEndpoint,
        on_delete=models.CASCADE,
        related_name="deliveries",
        verbose_name=_("endpoint"),
    )
    event = models.ForeignKey(
        Event, on_delete=models.CASCADE, related_name="+", verbose_name=_("event")
    )
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.PENDING
    )
    attempts = models.PositiveSmallIntegerField(_("tries"), default=0)
    last_attempt_at = models.DateTimeField(_("last try"), null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(
        _("last answer's status"), null=True, blank=True
    )
    last_error = models.CharField(_("last problem"), max_length=200, blank=True)
    delivered_at = models.DateTimeField(_("delivered at"), null=True, blank=True)
    created_at = models.DateTimeField(_("created at"), default=timezone.now)

    class Meta:
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "event"], name="delivery_once_per_endpoint_event"
            )
        ]

    def __str__(self) -> str:
        return f"{self.event.type} → {self.endpoint}"
