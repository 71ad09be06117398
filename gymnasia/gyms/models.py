"""Businesses (the gyms, our tenants), their staff roles and their members."""

from __future__ import annotations

import datetime
import zoneinfo
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.phones import phone_e164, phone_stored


class Language(models.TextChoices):
    SPANISH = "es", _("Spanish")
    ENGLISH = "en", _("English")


def validate_time_zone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(_("Unknown time zone: %(zone)s"), params={"zone": value})


class Business(models.Model):
    """A gym using Gymnasia. Every other row of the domain belongs to one."""

    name = models.CharField(_("name"), max_length=200)
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    time_zone = models.CharField(
        _("time zone"),
        max_length=64,
        default="Europe/Madrid",
        validators=[validate_time_zone],
    )
    language = models.CharField(
        _("default language"),
        max_length=2,
        choices=Language.choices,
        default=Language.SPANISH,
    )
    reminder_minutes = models.PositiveSmallIntegerField(
        _("remind staff after (minutes)"),
        default=15,
        validators=[MinValueValidator(1)],
        help_text=_(
            "A request still waiting this long reminds the staff who asked for "
            "reminders, once."
        ),
    )
    escalation_minutes = models.PositiveSmallIntegerField(
        _("tell the owners after (minutes)"),
        default=60,
        validators=[MinValueValidator(1)],
        help_text=_(
            "A request still waiting this long is told to the owners, once; sooner "
            "when it would expire first."
        ),
    )
    contact_details = models.TextField(
        _("contact details"),
        blank=True,
        max_length=500,
        help_text=_(
            "How members reach the gym (phone, e-mail, reception hours). The "
            "assistant gives them when a member asks for a person and handing the "
            "conversation to staff is not enabled."
        ),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("business")
        verbose_name_plural = _("businesses")
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def zone(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.time_zone)


class StaffRole(models.Model):
    """A Django user working for a business, as its owner or as staff."""

    class Role(models.TextChoices):
        OWNER = "owner", _("Owner")
        STAFF = "staff", _("Staff")

    business = models.ForeignKey(
        Business,
        on_delete=models.CASCADE,
        related_name="staff_roles",
        verbose_name=_("business"),
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="gym_roles",
        verbose_name=_("user"),
    )
    role = models.CharField(_("role"), max_length=10, choices=Role.choices)
    # How this person hears of what waits for them (approvals.notices).
    email_notifications = models.BooleanField(
        _("e-mail notifications"),
        default=True,
        help_text=_("Sent to the user's e-mail address."),
    )
    notify_requests = models.BooleanField(_("new requests"), default=True)
    notify_handoffs = models.BooleanField(_("new handoffs"), default=True)
    notify_reminders = models.BooleanField(
        _("reminders"),
        default=True,
        help_text=_("Requests still waiting; owners also hear of the overdue ones."),
    )
    quiet_from = models.TimeField(
        _("quiet hours from"),
        null=True,
        blank=True,
        help_text=_("In the gym's time zone; mails wait until the quiet hours end."),
    )
    quiet_until = models.TimeField(_("quiet hours until"), null=True, blank=True)
    language = models.CharField(
        _("language"),
        max_length=2,
        choices=Language.choices,
        blank=True,
        help_text=_("Empty means the business's default language."),
    )

    class Meta:
        verbose_name = _("staff role")
        verbose_name_plural = _("staff roles")
        constraints = [
            models.UniqueConstraint(
                fields=["business", "user"], name="staffrole_one_per_business_user"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.get_role_display()}, {self.business})"

    def clean(self) -> None:
        if (self.quiet_from is None) != (self.quiet_until is None):
            raise ValidationError(_("Give both ends of the quiet hours, or neither."))

    def quiet_at(self, moment: datetime.datetime) -> bool:
        """Whether ``moment`` falls in this person's quiet hours, read in the
        gym's time zone (hours that pass midnight, 22:00 to 07:00, included)."""
        if self.quiet_from is None or self.quiet_until is None:
            return False
        local = moment.astimezone(self.business.zone).time()
        if self.quiet_from <= self.quiet_until:
            return self.quiet_from <= local < self.quiet_until
        return local >= self.quiet_from or local < self.quiet_until

    @property
    def reads(self) -> str:
        """The language mails and pages for this person are written in."""
        return self.language or self.business.language


class Member(models.Model):
    """A member of a gym, known by the id the gym's own site gives them."""

    business = models.ForeignKey(
        Business,
        on_delete=models.CASCADE,
        related_name="members",
        verbose_name=_("business"),
    )
    external_id = models.CharField(_("external id"), max_length=200)
    name = models.CharField(_("name"), max_length=200, blank=True)
    email = models.EmailField(_("email"), blank=True)
    #: In E.164 (``gymnasia.gyms.phones``); a WhatsApp sender is matched by it.
    phone = models.CharField(
        _("phone"),
        max_length=32,
        blank=True,
        db_index=True,
        help_text=_(
            "With the country code, e.g. +34 600 123 456. A member who writes "
            "to the gym's WhatsApp number from it is recognised."
        ),
    )
    language = models.CharField(
        _("language"),
        max_length=2,
        choices=Language.choices,
        blank=True,
        help_text=_("Empty means the business's default language."),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("member")
        verbose_name_plural = _("members")
        ordering = ["business", "name", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["business", "external_id"], name="member_unique_external_id"
            )
        ]

    def __str__(self) -> str:
        return self.name or self.external_id

    def save(self, *args: Any, **kwargs: Any) -> None:
        # One form for every way a member is written (admin, imports, a
        # vendor's sync), so that a sender's number finds it.
        self.phone = phone_stored(self.phone)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        if self.phone and not phone_e164(self.phone):
            raise ValidationError(
                {
                    "phone": _(
                        "Write the number with its country code, e.g. +34 600 123 456."
                    )
                }
            )
        self.phone = phone_stored(self.phone)
