"""The class schedule of each gym and its members' bookings."""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Member


class ClassType(models.Model):
    """A kind of class the gym teaches (spinning, yoga, …)."""

    business = models.ForeignKey(
        Business,
        on_delete=models.CASCADE,
        related_name="class_types",
        verbose_name=_("business"),
    )
    name = models.CharField(_("name"), max_length=120)
    description = models.TextField(_("description"), blank=True)

    class Meta:
        verbose_name = _("class type")
        verbose_name_plural = _("class types")
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["business", "name"], name="classtype_unique_name"
            )
        ]

    def __str__(self) -> str:
        return self.name


class ClassSession(models.Model):
    """One scheduled occurrence of a class, with its room and capacity."""

    business = models.ForeignKey(
        Business,
        on_delete=models.CASCADE,
        related_name="class_sessions",
        verbose_name=_("business"),
    )
    class_type = models.ForeignKey(
        ClassType,
        on_delete=models.PROTECT,
        related_name="sessions",
        verbose_name=_("class type"),
    )
    starts_at = models.DateTimeField(_("starts at"))
    ends_at = models.DateTimeField(_("ends at"))
    capacity = models.PositiveIntegerField(_("capacity"))
    instructor = models.CharField(_("instructor"), max_length=120, blank=True)
    room = models.CharField(_("room"), max_length=120, blank=True)
    is_cancelled = models.BooleanField(_("cancelled"), default=False)

    class Meta:
        verbose_name = _("class session")
        verbose_name_plural = _("class sessions")
        ordering = ["starts_at"]
        indexes = [models.Index(fields=["business", "starts_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")),
                name="classsession_ends_after_start",
            ),
            models.CheckConstraint(
                condition=models.Q(capacity__gt=0),
                name="classsession_capacity_positive",
            ),
            models.UniqueConstraint(
                fields=["business", "class_type", "starts_at", "room"],
                name="classsession_unique_slot",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.class_type} {timezone.localtime(self.starts_at):%Y-%m-%d %H:%M}"


class Booking(models.Model):
    """A member's place in a class session."""

    class Status(models.TextChoices):
        CONFIRMED = "confirmed", _("Confirmed")
        CANCELLED = "cancelled", _("Cancelled")

    business = models.ForeignKey(
        Business, on_delete=models.CASCADE, related_name="+", verbose_name=_("business")
    )
    member = models.ForeignKey(
        Member,
        on_delete=models.CASCADE,
        related_name="bookings",
        verbose_name=_("member"),
    )
    session = models.ForeignKey(
        ClassSession,
        on_delete=models.PROTECT,
        related_name="bookings",
        verbose_name=_("class session"),
    )
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.CONFIRMED
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    cancelled_at = models.DateTimeField(_("cancelled at"), null=True, blank=True)

    class Meta:
        verbose_name = _("booking")
        verbose_name_plural = _("bookings")
        ordering = ["session__starts_at", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "member"],
                condition=models.Q(status="confirmed"),
                name="booking_one_confirmed_per_member",
            )
        ]

    def __str__(self) -> str:
        return f"{self.member} @ {self.session} ({self.get_status_display()})"
