from __future__ import annotations

from django.contrib import admin

from approvals.models import PendingAction
from tools.admin import ReadOnlyScopedAdmin


@admin.register(PendingAction)
class PendingActionAdmin(ReadOnlyScopedAdmin):
    list_display = ["requested_at", "tool_name", "status", "member", "conversation_key"]
    list_filter = ["status", "tool_name"]
    search_fields = ["tool_name", "conversation_key"]
