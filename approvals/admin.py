from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from approvals.models import PendingAction, PendingActionEvent
from tools.admin import ReadOnlyScopedAdmin


class PendingActionEventInline(admin.TabularInline):
    """The action's trail, as it happened; nobody edits it."""

    model = PendingActionEvent
    fields = ("created_at", "kind", "actor", "parameters")
    readonly_fields = ("created_at", "kind", "actor", "parameters")
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(PendingAction)
class PendingActionAdmin(ReadOnlyScopedAdmin):
    list_display = [
        "requested_at",
        "tool_name",
        "status",
        "member",
        "expires_at",
        "decided_by",
    ]
    list_filter = ["status", "tool_name"]
    search_fields = ["tool_name", "conversation_key"]
    inlines = [PendingActionEventInline]
