"""The owners' Panel in admin: a gym's figures for a period, the verification
log of that period as CSV, and the switch of a ready tool to automatic.

Owners and staff of the gym see the Panel (staff read-only: the switch is an
owner's, and refused to staff with 403); a gym the user does not work at is a
404, whatever the address asks. Wrapped by ``admin.site.admin_view`` (sign-in,
the admin's guard on query strings) in ``approvals.panel.urls``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import BadRequest, PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from approvals.look import admin_look
from approvals.panel.figures import PERIODS, Period
from approvals.panel.page import panel_context
from approvals.panel.readiness import readiness_for, tool_automatic_switch
from gymnasia.errors import InvalidValue, NotFound
from gymnasia.gyms.models import Business, StaffRole
from gymnasia.text import csv_cell
from tools.models import AgentToolSetting, ToolCallLog
from tools.presentation import call_status_label, tool_title, verification_label


def _chosen(request: HttpRequest) -> tuple[Business, list[Business], bool]:
    """The gym the page is about (``?business=``, else the user's first) among
    the user's gyms, the gyms, and whether the user owns it; another gym is not
    found. One query."""
    if request.user.is_superuser:
        held = [(gym, True) for gym in Business.objects.order_by("name")]
    else:
        roles = StaffRole.objects.filter(
            user_id=cast(int, request.user.pk)
        ).select_related("business")
        held = sorted(
            ((role.business, role.role == StaffRole.Role.OWNER) for role in roles),
            key=lambda pair: pair[0].name,
        )
    if not held:
        raise PermissionDenied
    wanted = request.GET.get("business") or request.POST.get("business")
    for gym, owner in held:
        if not wanted or str(gym.pk) == wanted:
            return gym, [gym for gym, _owner in held], owner
    raise Http404(_("No such business."))


def _period(request: HttpRequest, business: Business) -> Period:
    raw = request.GET.get("days", "30")
    if raw not in {str(days) for days in PERIODS}:
        raise BadRequest(_("The period is 7, 30 or 90 days."))
    return Period.of(business, int(raw))


@require_GET
def panel(request: HttpRequest) -> HttpResponse:
    business, gyms, owner = _chosen(request)
    period = _period(request, business)
    context = {
        **admin_look(request),
        **panel_context(period, owner=owner),
        "title": _("Panel · %(business)s") % {"business": business.name},
        "business": business,
        "businesses": gyms,
        "periods": PERIODS,
    }
    return render(request, "approvals/panel/panel.html", context)


#: The verification log's columns in the CSV: what happened, never a credential
#: (R12: none is ever in a call's record) nor the model's raw text.
CSV_COLUMNS = (
    "created_at",
    "tool",
    "status",
    "verification",
    "conversation",
    "attempts",
    "duration_ms",
    "finished_at",
)


class _Echo:
    def write(self, value: str) -> str:
        return value


def _csv_lines(period: Period) -> Iterator[str]:
    """The CSV's lines: every cell quoted, none a formula (``csv_cell``)."""
    writer = csv.writer(_Echo(), quoting=csv.QUOTE_ALL)
    yield writer.writerow(CSV_COLUMNS)
    rows = (
        period.rows(ToolCallLog)
        .order_by("created_at")
        .values_list(
            "created_at",
            "tool_name",
            "status",
            "verification",
            "conversation_key",
            "attempts",
            "duration_ms",
            "finished_at",
        )
    )
    for (
        created,
        tool,
        status,
        verification,
        key,
        attempts,
        ms,
        finished,
    ) in rows.iterator(chunk_size=2000):
        cells = [
            timezone.localtime(created, period.zone).isoformat(),
            f"{tool_title(tool)} ({tool})",
            call_status_label(status),
            verification_label(verification) if verification else "",
            key,
            attempts,
            "" if ms is None else round(ms, 1),
            timezone.localtime(finished, period.zone).isoformat() if finished else "",
        ]
        yield writer.writerow([csv_cell(cell) for cell in cells])


@require_GET
def verification_csv(request: HttpRequest) -> StreamingHttpResponse:
    """The period's verification log, one call a line, streamed."""
    business, _gyms, _owner = _chosen(request)
    period = _period(request, business)
    response = StreamingHttpResponse(_csv_lines(period), content_type="text/csv")
    name = f"verification-{business.slug}-{period.first:%Y%m%d}-{period.days}d.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_http_methods(["GET", "POST"])
def switch(request: HttpRequest, setting_id: int) -> HttpResponse:
    """An owner's switch of one ready tool to automatic: a page that asks to
    confirm, then the POST that does it. Staff are refused (403), changing
    nothing."""
    business, _gyms, owner = _chosen(request)
    if not owner:
        raise PermissionDenied
    back = f"{reverse('panel:panel')}?business={business.pk}"
    if request.method == "POST":
        try:
            ready = tool_automatic_switch(
                business=business,
                setting_id=setting_id,
                user=cast(AbstractBaseUser, request.user),
            )
        except NotFound as error:
            raise Http404(str(error)) from None
        except InvalidValue as error:
            messages.error(request, str(error))
            return redirect(back)
        messages.success(request, _switched_words(ready))
        return redirect(back)
    setting = AgentToolSetting.objects.filter(
        agent__business=business, pk=setting_id
    ).first()
    if setting is None:
        raise Http404(_("No such tool setting."))
    ready = readiness_for(business, [setting])[0]
    context: dict[str, Any] = {
        **admin_look(request),
        "title": _("Switch to automatic"),
        "ready": ready,
        "business": business,
        "back": back,
    }
    return render(request, "approvals/panel/switch.html", context)


def _switched_words(ready: Any) -> str:
    if ready.amount_argument is None:
        return _("%(tool)s of %(agent)s now runs automatically.") % {
            "tool": ready.title,
            "agent": ready.setting.agent,
        }
    return _("%(tool)s of %(agent)s now runs automatically up to %(amount)s.") % {
        "tool": ready.title,
        "agent": ready.setting.agent,
        "amount": ready.suggested_limit,
    }
