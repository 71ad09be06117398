"""Integrations, per-agent tool settings, the verification log of tool calls, the
action locks and staff handoffs."""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Member


class Integration(models.Model):
    """A business's connection to one integration kind.

    Built-in kinds are connected by switching them on; ``stripe`` needs the gym's
    secret key, stored encrypted (``tools.crypto``) and never shown whole again;
    ``mindbody`` its site id, API key and a staff user's name and password (all
    encrypted), and serves the kinds its ``config["serves"]`` names.
    """

    class Kind(models.TextChoices):
        NUTRITION = "nutrition", _("Nutrition (built in)")
        CLASSES = "classes", _("Classes (built in)")
        MEMBERSHIPS = "memberships", _("Memberships (built in)")
        STRIPE = "stripe", _("Stripe (the gym's own account)")
        MINDBODY = "mindbody", _("Mindbody (the gym's own software)")

    class Status(models.TextChoices):
        CONNECTED = "connected", _("Connected")
        DISCONNECTED = "disconnected", _("Disconnected")
        FAILING = "failing", _("Failing")

    BUILT_IN = frozenset({Kind.NUTRITION, Kind.CLASSES, Kind.MEMBERSHIPS})

    business = models.ForeignKey(
        Business,
        on_delete=models.CASCADE,
        related_name="integrations",
        verbose_name=_("business"),
    )
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices)
    status = models.CharField(
        _("status"), max_length=12, choices=Status.choices, default=Status.DISCONNECTED
    )
    config = models.JSONField(_("configuration"), default=dict, blank=True)
    credentials_encrypted = models.TextField(_("credentials (encrypted)"), blank=True)
    credentials_hint = models.CharField(
        _("stored credential"), max_length=12, blank=True
    )
    last_checked_at = models.DateTimeField(
        _("last health check"), null=True, blank=True
    )
    last_error = models.TextField(_("last error"), blank=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("integration")
        verbose_name_plural = _("integrations")
        ordering = ["business", "kind"]
        constraints = [
            models.UniqueConstraint(
                fields=["business", "kind"], name="integration_one_per_kind"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.get_status_display()})"


class AgentToolSetting(models.Model):
    """How one agent may use one tool: enabled, automatic or behind approval, limits.

    A tool without a row is not enabled. The agent is referenced by name so that
    this app never imports ``agents``.
    """

    class Mode(models.TextChoices):
        AUTOMATIC = "auto", _("Automatic")
        APPROVAL = "gated", _("Requires approval")

    agent = models.ForeignKey(
        "agents.Agent",
        on_delete=models.CASCADE,
        related_name="tool_settings",
        verbose_name=_("agent"),
    )
    tool_name = models.CharField(_("tool"), max_length=100)
    enabled = models.BooleanField(_("enabled"), default=False)
    mode = models.CharField(
        _("mode"), max_length=5, choices=Mode.choices, default=Mode.APPROVAL
    )
    auto_limit = models.DecimalField(
        _("automatic up to"),
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0"))],
        help_text=_(
            "For tools with an amount: amounts up to this run without approval, "
            "larger ones wait for staff."
        ),
    )
    max_amount = models.DecimalField(
        _("never more than"),
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.01"))],
        help_text=_("For tools with an amount: larger amounts are refused."),
    )
    approval_valid_minutes = models.PositiveIntegerField(
        _("approval request valid for (minutes)"),
        default=24 * 60,
        validators=[MinValueValidator(1)],
    )

    class Meta:
        verbose_name = _("tool setting")
        verbose_name_plural = _("tool settings")
        ordering = ["agent", "tool_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "tool_name"], name="agenttoolsetting_one_per_tool"
            )
        ]

    def __str__(self) -> str:
        from tools.presentation import tool_titled  # it reads this module's models

        return tool_titled(self.tool_name)


class ToolCallLog(models.Model):
    """One row per call the model proposed: the call's durable run, every decision,
    the outcome, timings (``tools.calls`` holds every change of its state).

    Its id is the action's id: idempotency keys sent to integrations derive from it.
    ``status`` is ``executing`` while a write runs (until ``lease_until``), then the
    result's status; a gated call is ``pending_approval`` until staff decide it:
    ``approved`` (then executing on this same row), ``rejected``, ``expired`` or
    ``superseded`` by a correction. ``result`` is its result as it stands now.
    A call that waited for staff is a *request*: ``approvals`` lists and decides
    them (it keeps the decision), nothing is registered anywhere else.
    """

    EXECUTING = "executing"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    business = models.ForeignKey(
        Business,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("business"),
        db_index=False,
    )
    member = models.ForeignKey(
        Member,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("member"),
        db_index=False,
    )
    conversation_key = models.CharField(_("conversation"), max_length=64)
    message_key = models.CharField(_("message"), max_length=64, blank=True)
    provider_call_id = models.CharField(
        _("provider call id"), max_length=200, blank=True
    )
    tool_name = models.CharField(_("tool"), max_length=200)
    effect = models.CharField(_("effect"), max_length=5, blank=True)
    arguments_raw = models.TextField(_("arguments as proposed"), blank=True)
    arguments = models.JSONField(_("arguments"), null=True, blank=True)
    action_key = models.CharField(_("action key"), max_length=64, blank=True)
    offered = models.BooleanField(_("offered"), default=False)
    valid = models.BooleanField(_("valid"), null=True)
    gated = models.BooleanField(_("gated"), default=False)
    duplicate_of = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="duplicates",
        verbose_name=_("duplicate of"),
        db_index=False,
    )
    status = models.CharField(_("status"), max_length=20)
    verification = models.CharField(_("verification"), max_length=20, blank=True)
    result = models.JSONField(_("result"), default=dict)
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    steps = models.JSONField(_("steps"), default=list)
    #: The member's message whose turn honoured this call's ``again`` (R7).
    again_for = models.CharField(_("again, for message"), max_length=64, blank=True)
    created_at = models.DateTimeField(
        _("created at"), default=timezone.now, db_index=True
    )
    #: A call paused for staff: until when it may be decided, and the owner's
    #: "never more than" when it was proposed (a correction is bounded by it too).
    #: Only calls that waited for staff have ``expires_at``: they are the requests.
    expires_at = models.DateTimeField(_("approval expires at"), null=True, blank=True)
    max_amount = models.DecimalField(
        _("never more than"), max_digits=12, decimal_places=2, null=True, blank=True
    )
    #: While executing: after this, its worker is taken to be gone (R9).
    lease_until = models.DateTimeField(_("lease until"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    duration_ms = models.FloatField(_("duration (ms)"), null=True, blank=True)

    class Meta:
        verbose_name = _("tool call")
        verbose_name_plural = _("tool calls")
        ordering = ["created_at"]
        # Every index costs each call's insert: only the lookups the harness and
        # the pages make, partial where only some rows need it.
        indexes = [
            models.Index(fields=["action_key", "created_at"]),
            models.Index(fields=["conversation_key", "created_at"]),
            # A gym's log and the Panel's period; on PostgreSQL it also holds
            # what the Panel groups by (migration 0009): an index-only read.
            models.Index(
                fields=["business", "created_at"], name="toolcalllog_business"
            ),
            # The sweep's look for writes left running: a few rows, whatever the size.
            models.Index(
                fields=["created_at"],
                condition=models.Q(status="executing"),
                name="toolcalllog_executing",
            ),
            # The staff inbox (a gym's requests, newest first) and the expiry of
            # waiting ones: only calls that waited for staff enter them.
            models.Index(
                fields=["business", "created_at"],
                condition=models.Q(expires_at__isnull=False),
                name="toolcalllog_requests",
            ),
            models.Index(
                fields=["status", "expires_at"],
                condition=models.Q(expires_at__isnull=False),
                name="toolcalllog_request_expiry",
            ),
            # A tool's latest requests (the Panel's readiness for automatic).
            models.Index(
                fields=["business", "tool_name", "created_at"],
                condition=models.Q(expires_at__isnull=False),
                name="toolcalllog_tool_requests",
            ),
        ]

    def __str__(self) -> str:
        """The call as people read it: its tool's title and its status in words."""
        from tools.presentation import call_status_label, tool_title

        return f"{tool_title(self.tool_name)} — {call_status_label(self.status)}"


class ToolCallEvent(models.Model):
    """One change of a call's state after it was proposed: who, when, why. Rows
    are only ever added (``tools.calls`` writes them with each transition)."""

    call = models.ForeignKey(
        ToolCallLog,
        on_delete=models.CASCADE,
        related_name="events",
        verbose_name=_("tool call"),
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
        verbose_name = _("tool call event")
        verbose_name_plural = _("tool call events")
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        from tools.presentation import call_event_label

        when = timezone.localtime(self.created_at)
        return f"{call_event_label(self.kind)}, {when:%Y-%m-%d %H:%M:%S}"


class ActionLock(models.Model):
    """A row per action key, locked while deciding whether an action is a duplicate.

    Concurrent identical calls queue on this row, so only one of them executes.
    """

    key = models.CharField(max_length=64, primary_key=True)
    touched_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("action lock")
        verbose_name_plural = _("action locks")

    def __str__(self) -> str:
        return self.key


class Handoff(models.Model):
    """A case a person must take: an unknown outcome, or a member asking for staff.

    Why the case was made is a ``cause``, with its parameters in ``tried`` (the
    tool, and for a handler's fault the error's name), read in the reader's
    language (``tools.presentation.handoff_described``); ``reason`` holds only
    the member's own words. Cases recorded before the cause was a code keep
    their English words in ``reason`` and ``known``; migration 0005 gave those
    the harness wrote their cause.
    """

    class Cause(models.TextChoices):
        MEMBER_ASKED = "member_asked", _("The member asked for a person")
        NO_ANSWER = "no_answer", _("No answer came back")
        HANDLER_FAILED = "handler_failed", _("The program stopped with a fault")
        NOT_CONFIRMED = "not_confirmed", _("Looking again could not confirm it")
        WORKER_STOPPED = "worker_stopped", _("An approved action's worker stopped")
        TURN_STOPPED = "turn_stopped", _("The assistant's turn stopped")
        BUDGET_USED_UP = (
            "budget_used_up",
            _("The assistant's monthly budget is used up"),
        )
        WHATSAPP_AMBIGUOUS = (
            "wa_ambiguous",
            _("A WhatsApp number matches more than one member"),
        )
        WHATSAPP_UNREACHED = (
            "wa_unreached",
            _("A member could not be reached on WhatsApp"),
        )

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        RESOLVED = "resolved", _("Resolved")

    class Resolution(models.TextChoices):
        DONE = "done", _("It was done")
        NOT_DONE = "not_done", _("It was not done")
        NOTE = "note", _("Note")

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
    tool_call = models.ForeignKey(
        ToolCallLog,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="handoffs",
        verbose_name=_("tool call"),
    )
    cause = models.CharField(
        _("cause"), max_length=20, choices=Cause.choices, blank=True, default=""
    )
    reason = models.TextField(_("reason"), blank=True)
    tried = models.JSONField(_("what was tried"), default=dict)
    known = models.TextField(_("what is known"), blank=True)
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.OPEN
    )
    resolution = models.CharField(
        _("resolution"), max_length=10, choices=Resolution.choices, blank=True
    )
    note = models.TextField(_("note"), blank=True)
    created_at = models.DateTimeField(_("created at"), default=timezone.now)
    resolved_at = models.DateTimeField(_("resolved at"), null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("resolved by"),
    )

    class Meta:
        verbose_name = _("handoff")
        verbose_name_plural = _("handoffs")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        what = self.reason[:60] or self.get_cause_display()
        return f"{what} ({self.get_status_display()})"
