"""Sign-in throttling (django-axes, configured in the settings): whose address a
failed sign-in is counted under, and which lock-outs an owner sees and lifts.

A lock-out is a username and an address; an owner sees and lifts those of the
people of their own gyms only (a superuser, every one): another gym's usernames
and addresses are not theirs to read.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from gymnasia.gyms.models import StaffRole


def client_address(request: HttpRequest) -> str | None:
    """The client's address as the server gives it (uvicorn takes it from
    ``X-Forwarded-For`` only when the proxy is listed in ``FORWARDED_ALLOW_IPS``)."""
    address = request.META.get("REMOTE_ADDR")
    return str(address) if address else None


def locked_out_page(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """The sign-in page's answer to a locked-out username and address: in words,
    how long, and who can lift it (``AXES_LOCKOUT_CALLABLE``)."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return render(
        request,
        "sign_in_locked.html",
        {"failure_limit": settings.AXES_FAILURE_LIMIT, "minutes": minutes},
        status=429,
    )


def owned_usernames(user: Any) -> QuerySet[Any] | None:
    """The usernames whose lock-outs ``user`` may see and lift: everyone's for a
    superuser (``None``), the people of the gyms they own for an owner."""
    if user.is_superuser:
        return None
    owned = StaffRole.objects.filter(user_id=user.pk, role=StaffRole.Role.OWNER).values(
        "business_id"
    )
    return (
        get_user_model()
        .objects.filter(gym_roles__business_id__in=owned)
        .values("username")
    )


def user_owns_a_gym(user: Any) -> bool:
    return bool(
        user.is_active
        and user.is_staff
        and StaffRole.objects.filter(
            user_id=user.pk, role=StaffRole.Role.OWNER
        ).exists()
    )
