"""Sign-in lock-outs in admin (django-axes' attempts): an owner sees those of the
people of their own gyms and lifts them; a superuser, every one. Staff do not
see them. Lifting deletes the attempts, as ``manage.py axes_reset_username``
does."""

from __future__ import annotations

import datetime
from typing import Any

from axes.models import AccessAttempt
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop, ngettext

from gymnasia.sign_in import owned_usernames, user_owns_a_gym

#: django-axes' words in its admin, which it has no Spanish for.
AXES_WORDS = (
    gettext_noop("access attempt"),
    gettext_noop("access attempts"),
    gettext_noop("Username"),
    gettext_noop("IP Address"),
    gettext_noop("Failed Logins"),
    gettext_noop("Attempt Time"),
)


@admin.register(AccessAttempt)
class SignInLockoutAdmin(admin.ModelAdmin):
    list_display = (
        "username",
        "ip_address",
        "failures_since_start",
        "attempt_time",
        "locked_until",
    )
    search_fields = ("username", "ip_address")
    fields = list_display
    readonly_fields = list_display
    actions = ("lift",)
    ordering = ("-attempt_time",)

    @admin.display(description=_("locked out until"))
    def locked_until(self, attempt: AccessAttempt) -> datetime.datetime | str:
        if attempt.failures_since_start < settings.AXES_FAILURE_LIMIT:
            return "—"
        return timezone.localtime(attempt.attempt_time + settings.AXES_COOLOFF_TIME)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        attempts = super().get_queryset(request)
        usernames = owned_usernames(request.user)
        return (
            attempts if usernames is None else attempts.filter(username__in=usernames)
        )

    def _may(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser) or user_owns_a_gym(request.user)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._may(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description=_("Lift the lock-out"), permissions=["delete"])
    def lift(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        lifted, _counts = queryset.delete()
        self.message_user(
            request,
            ngettext(
                "%(count)s lock-out lifted: they may sign in again.",
                "%(count)s lock-outs lifted: they may sign in again.",
                lifted,
            )
            % {"count": lifted},
            messages.SUCCESS,
        )
