"""Admin pages of the verification log and handoffs (integrations: in
``tools.admin_integrations``, registered with these)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.admin import (
    ReadOnlyScopedAdmin,
)
from tools import admin_integrations  # noqa: F401  (registers Integration's page)
from tools.admin_filters import (
    CallStatusFilter,
    OutcomeFilter,
    ToolFilter,
    VerificationFilter,
)
from tools.models import Handoff, ToolCallEvent, ToolCallLog
from tools.naming import request_arguments_described
from tools.presentation import (
    call_event_label,
    call_status_label,
    call_steps_described,
    handoff_described,
    tool_title,
    verification_label,
)


def _code(value: Any) -> SafeString:
    """A record as the machine keeps it, set apart as code."""
    return format_html("<pre><code>{}</code></pre>", value)


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

    @admin.display(description=_("parameters"))
    def details(self, obj: ToolCallEvent) -> SafeString | str:
        if not obj.parameters:
            return "—"
        return _code(json.dumps(obj.parameters, ensure_ascii=False, sort_keys=True))


#: A call's page, in the order an owner reads it: what, how it ended, why.
CALL_FIELDS: tuple[str, ...] = (
    "created_at",
    "business",
    "member",
    "conversation_key",
    "tool",
    "status_in_words",
    "verification_in_words",
    "arguments_in_words",
    "steps_in_words",
    "result_recorded",
    "proposed",
    "offered",
    "valid",
    "gated",
    "duplicate_of",
    "attempts",
    "duration_ms",
    "expires_at",
    "max_amount",
    "finished_at",
    "provider_call_id",
)


@admin.register(ToolCallLog)
class ToolCallLogAdmin(ReadOnlyScopedAdmin):
    """The verification log: each call in words, with the machine's record of
    it (its arguments and result as the model saw them) set apart as code."""

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

    @admin.display(description=_("tool"), ordering="tool_name")
    def tool(self, obj: ToolCallLog) -> SafeString:
        title = tool_title(obj.tool_name)
        if title == obj.tool_name:
            return format_html("<code>{}</code>", obj.tool_name)
        return format_html("{} <code>{}</code>", title, obj.tool_name)

    @admin.display(description=_("status"), ordering="status")
    def status_in_words(self, obj: ToolCallLog) -> str:
        return call_status_label(obj.status)

    @admin.display(description=_("verification"), ordering="verification")
    def verification_in_words(self, obj: ToolCallLog) -> str:
        return verification_label(obj.verification) if obj.verification else "—"

    @admin.display(description=_("arguments"))
    def arguments_in_words(self, obj: ToolCallLog) -> str:
        described = request_arguments_described(
            business=obj.business, member=obj.member, arguments=obj.arguments or {}
        )
        return "; ".join(f"{each.label}: {each.words}" for each in described)

    @admin.display(description=_("steps, in words"))
    def steps_in_words(self, obj: ToolCallLog) -> str:
        return " → ".join(call_steps_described(obj.steps, times=True))

    @admin.display(description=_("result, as the model received it"))
    def result_recorded(self, obj: ToolCallLog) -> SafeString:
        return _code(json.dumps(obj.result, ensure_ascii=False, indent=2))

    @admin.display(description=_("arguments as proposed"))
    def proposed(self, obj: ToolCallLog) -> SafeString | str:
        return _code(obj.arguments_raw) if obj.arguments_raw else "—"


#: A case's page: what it is about and what is known, in words; what was tried
#: as the harness recorded it, set apart as code.
HANDOFF_FIELDS: tuple[str, ...] = (
    "created_at",
    "business",
    "member",
    "conversation_key",
    "case",
    "what_is_known",
    "cause",
    "tool_call",
    "tried_recorded",
    "status",
    "resolution",
    "note",
    "resolved_at",
    "resolved_by",
)


@admin.register(Handoff)
class HandoffAdmin(ReadOnlyScopedAdmin):
    list_display = ["created_at", "case", "status", "resolution", "member"]
    list_filter = ["status", "cause", "resolution"]
    search_fields = ["reason", "conversation_key"]
    fields = HANDOFF_FIELDS
    readonly_fields = HANDOFF_FIELDS

    @admin.display(description=_("case"))
    def case(self, obj: Handoff) -> str:
        """What the case is about, in the reader's language, as the inbox says
        it (a write's case records a cause, not words)."""
        return handoff_described(obj).title

    @admin.display(description=_("what is known"))
    def what_is_known(self, obj: Handoff) -> str:
        return handoff_described(obj).known

    @admin.display(description=_("what was tried"))
    def tried_recorded(self, obj: Handoff) -> SafeString | str:
        if not obj.tried:
            return "—"
        return _code(json.dumps(obj.tried, ensure_ascii=False, sort_keys=True))
