"""Memberships of each gym's members and their freeze periods.

Card payments are not modelled here: they live in the gym's own Stripe account.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Member


class Membership(models.Model):
    """A member's plan between two dates.

    ``status`` is what staff set; a freeze period covering a day makes an active
    membership frozen on that day (see ``membership_state_on``).
    """

    class Status(models.TextChoices):
        ACTIVE = "active", _("Active")
        FROZEN = "frozen", _("Frozen")
        CANCELLED = "cancelled", _("Cancelled")

    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    member = models.ForeignKey(
        Member,
        on_delete=models.CASCADE,
        related_name="memberships",
        verbose_name=_("member"),
    )
    plan = models.CharField(_("plan"), max_length=120)
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.ACTIVE
    )
    starts_on = models.DateField(_("starts on"))
    ends_on = models.DateField(_("ends on"))

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        ordering = ["-ends_on"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_on__gte=models.F("starts_on")),
                name="membership_ends_after_start",
            )
        ]

    def __str__(self) -> str:
        return f"{self.member}: {self.plan} ({self.get_status_display()})"


class MembershipFreeze(models.Model):
    """A period, both days included, during which the membership is paused."""

    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    membership = models.ForeignKey(
        Membership,
        on_delete=models.CASCADE,
        related_name="freezes",
        verbose_name=_("membership"),
    )
    start = models.DateField(_("first day"))
    end = models.DateField(_("last day"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("membership freeze")
        verbose_name_plural = _("membership freezes")
        ordering = ["start"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(end__gte=models.F("start")),
                name="freeze_end_after_start",
            )
        ]

    def __str__(self) -> str:
        return f"{self.membership}: {self.start} – {self.end}"

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1
