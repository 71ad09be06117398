"""Each person's own page of how they are told: e-mail on or off, which kinds,
quiet hours and language, for each gym they work at (owners change the same in
admin)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from approvals.look import admin_look
from approvals.views import HtmxHttpRequest, _staff, signed_in
from gymnasia.gyms.admin import NOTIFICATION_FIELDS
from gymnasia.gyms.models import StaffRole


class PreferencesForm(forms.ModelForm):
    class Meta:
        model = StaffRole
        fields = NOTIFICATION_FIELDS
        widgets = {
            "quiet_from": forms.TimeInput(attrs={"type": "time"}, format="%H:%M"),
            "quiet_until": forms.TimeInput(attrs={"type": "time"}, format="%H:%M"),
        }


@signed_in
@require_http_methods(["GET", "POST"])
def preferences(request: HtmxHttpRequest) -> HttpResponse:
    """The signed-in person's settings, one form per gym; a POST saves one."""
    user = _staff(request)
    roles = StaffRole.objects.filter(user_id=user.pk).select_related("business")
    forms_by_role = {
        role.pk: PreferencesForm(
            request.POST if request.POST.get("role") == str(role.pk) else None,
            instance=role,
            prefix=f"role-{role.pk}",
        )
        for role in roles
    }
    if request.method == "POST":
        form = forms_by_role.get(_number(request.POST.get("role")))
        if form is not None and form.is_valid():
            form.save()
            messages.success(request, _("Saved."))
            return redirect("approvals:preferences")
    return render(
        request,
        "approvals/preferences.html",
        {
            **admin_look(request),
            "forms": [(role, forms_by_role[role.pk]) for role in roles],
            "email": user.email,
        },
        status=400 if request.method == "POST" else 200,
    )


def _number(value: str | None) -> int:
    try:
        return int(value or "")
    except ValueError:
        return 0
