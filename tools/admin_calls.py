"""The verification log's pages (imported by ``tools.admin``, which registers the
app's pages): each call in the reader's words (what was asked, how it ended, each
step and its time in the reader's notation, what happened after), and the exact
record the model received behind its own link, a JSON download of that call for
owners who debug, never in the page's text."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.admin import ReadOnlyScopedAdmin
from tools.admin_filters import (
    CallStatusFilter,
    OutcomeFilter,
    ToolFilter,
    VerificationFilter,
)
from tools.models import ToolCallEvent, ToolCallLog
from tools.naming import request_arguments_described
from tools.presentation import (
    call_event_label,
    call_outcome_described,
    call_status_label,
    call_steps_described,
    duration_written,
    tool_title,
    verification_label,
)
from tools.sentences import request_sentence


def _code(value: Any) -> SafeString:
    """A record as the machine keeps it, set apart as code."""
    return format_html("<pre><code>{}</code></pre>", value)


def _call_link(call_id: Any) -> SafeString:
    url = reverse("admin:tools_toolcalllog_change", args=[call_id])
    return format_html('<a href="{}">{}</a>', url, gettext("the call"))


def event_details(parameters: dict[str, Any]) -> SafeString | str:
    """What an event of a call's trail records, in words: staff's reason, the
    call a correction made or corrected, the case opened, the outcome of an
    answer that came late (its full record is in the call's download)."""
    parts: list[tuple[str, SafeString | str]] = []
    reason = parameters.get("reason")
    if reason == "lease_passed":
        parts.append((gettext("its run's time passed with no outcome"), ""))
    elif reason:
        parts.append((gettext("reason: %(reason)s") % {"reason": reason}, ""))
    if parameters.get("by"):
        parts.append((gettext("corrected into"), _call_link(parameters["by"])))
    if parameters.get("corrects"):
        parts.append((gettext("corrects"), _call_link(parameters["corrects"])))
    if parameters.get("handoff"):
        url = reverse("admin:tools_handoff_change", args=[parameters["handoff"]])
        case = format_html('<a href="{}">{}</a>', url, gettext("the case"))
        parts.append((gettext("handed to staff:"), case))
    found = parameters.get("result")
    if isinstance(found, dict):
        outcome = call_outcome_described(
            status=str(found.get("status", "")),
            verification=str(found.get("verification") or ""),
        )
        parts.append(
            (
                gettext("the late answer: %(status)s / %(verification)s")
                % {
                    "status": outcome.status_label,
                    "verification": outcome.verification_label,
                },
                "",
            )
        )
    if not parts:
        return "—"
    return format_html_join("; ", "{} {}", parts)


class ToolCallEventInline(admin.TabularInline):
    """The call's trail after it was proposed (a request's decision, its
    execution, a lease that passed), as it happened; nobody edits it."""

    model = ToolCallEvent
    fields = ("created_at", "happened", "actor", "details")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description=_("event"))
    def happened(self, obj: ToolCallEvent) -> str:
        return call_event_label(obj.kind)

    @admin.display(description=_("details"))
    def details(self, obj: ToolCallEvent) -> SafeString | str:
        return event_details(obj.parameters or {})


def call_record(call: ToolCallLog) -> dict[str, Any]:
    """A call as the harness recorded it, for its download: the arguments as
    proposed and as validated, the exact result the model received, each step,
    and the trail after it. Nothing of it is a secret (R12: no credential ever
    reaches a call's record)."""
    return {
        "id": str(call.pk),
        "tool": call.tool_name,
        "provider_call_id": call.provider_call_id,
        "conversation": call.conversation_key,
        "member": call.member.external_id if call.member else None,
        "created_at": call.created_at.isoformat(),
        "finished_at": call.finished_at.isoformat() if call.finished_at else None,
        "status": call.status,
        "verification": call.verification,
        "arguments_as_proposed": call.arguments_raw,
        "arguments": call.arguments,
        "result": call.result,
        "steps": call.steps,
        "duration_ms": call.duration_ms,
        "events": [
            {
                "at": event.created_at.isoformat(),
                "kind": event.kind,
                "by": str(event.actor) if event.actor else None,
                "parameters": event.parameters,
            }
            for event in call.events.select_related("actor")
        ],
    }


#: A call's page, in the order an owner reads it: what, how it ended, why.
CALL_FIELDS: tuple[str, ...] = (
    "created_at",
    "business",
    "member",
    "conversation_key",
    "tool",
    "status_in_words",
    "verification_in_words",
    "request_in_words",
    "steps_in_words",
    "record_download",
    "proposed",
    "offered",
    "valid",
    "gated",
    "duplicate_of",
    "attempts",
    "duration_in_words",
    "expires_at",
    "max_amount",
    "finished_at",
    "provider_call_id",
)


class ToolCallLogAdmin(ReadOnlyScopedAdmin):
    """The verification log: each call in words; the machine's record of it (its
    arguments and result as the model saw them) in its download."""

    list_display = [
        "created_at",
        "tool",
        "status_in_words",
        "verification_in_words",
        "member",
        "conversation_key",
    ]
    list_filter = [CallStatusFilter, OutcomeFilter, VerificationFilter, ToolFilter]
    list_select_related = ["member"]
    search_fields = ["conversation_key", "tool_name", "provider_call_id"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]  # a log is read from its latest entries
    fields = CALL_FIELDS
    readonly_fields = CALL_FIELDS
    inlines = [ToolCallEventInline]

    def get_urls(self) -> list[Any]:
        download = path(
            "<path:object_id>/record.json",
            self.admin_site.admin_view(self.record_view),
            name="tools_toolcalllog_record",
        )
        return [download, *super().get_urls()]

    def record_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The call's record as a JSON file, for whoever may read its page: the
        owners and staff of its gym (another gym's call is not found)."""
        call = self.get_object(request, object_id)
        if call is None or not self.has_view_permission(request, call):
            raise Http404(gettext("No such call."))
        response = JsonResponse(
            call_record(call), json_dumps_params={"ensure_ascii": False, "indent": 2}
        )
        response["Content-Disposition"] = f'attachment; filename="call-{call.pk}.json"'
        return response

    @admin.display(description=_("tool"), ordering="tool_name")
    def tool(self, obj: ToolCallLog) -> SafeString:
        title = tool_title(obj.tool_name)
        if title == obj.tool_name:
            return format_html("<code>{}</code>", obj.tool_name)
        return format_html("{} <code>{}</code>", title, obj.tool_name)

    @admin.display(description=_("outcome"), ordering="status")
    def status_in_words(self, obj: ToolCallLog) -> str:
        return call_status_label(obj.status)

    @admin.display(description=_("verification"), ordering="verification")
    def verification_in_words(self, obj: ToolCallLog) -> str:
        return verification_label(obj.verification) if obj.verification else "—"

    @admin.display(description=_("what was asked"))
    def request_in_words(self, obj: ToolCallLog) -> str:
        """A write as one sentence (a request as staff read it); a read's
        arguments in words."""
        arguments = obj.arguments or {}
        if obj.effect == "write" and obj.arguments is not None:
            return request_sentence(
                business=obj.business,
                member=obj.member,
                tool_name=obj.tool_name,
                arguments=arguments,
            )
        described = request_arguments_described(
            business=obj.business, member=obj.member, arguments=arguments
        )
        return "; ".join(f"{each.label}: {each.words}" for each in described) or "—"

    @admin.display(description=_("steps, in words"))
    def steps_in_words(self, obj: ToolCallLog) -> str:
        return " → ".join(call_steps_described(obj.steps, times=True))

    @admin.display(description=_("the exact record"))
    def record_download(self, obj: ToolCallLog) -> SafeString:
        url = reverse("admin:tools_toolcalllog_record", args=[obj.pk])
        return format_html(
            '<a href="{}" download>{}</a>',
            url,
            gettext("Download this call as the model received it (JSON)"),
        )

    @admin.display(description=_("arguments as proposed"))
    def proposed(self, obj: ToolCallLog) -> SafeString | str:
        return _code(obj.arguments_raw) if obj.arguments_raw else "—"

    @admin.display(description=_("time taken"), ordering="duration_ms")
    def duration_in_words(self, obj: ToolCallLog) -> str:
        if obj.duration_ms is None:
            return "—"
        return duration_written(obj.duration_ms)
