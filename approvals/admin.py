from __future__ import annotations

from django.contrib import admin

from approvals.models import Decision
from tools.admin import ReadOnlyScopedAdmin


@admin.register(Decision)
class DecisionAdmin(ReadOnlyScopedAdmin):
    """Staff's decisions on requests, as they were made; nobody edits them."""

    list_display = ["decided_at", "kind", "call", "decided_by", "reason"]
    list_filter = ["kind", "call__tool_name"]
    search_fields = ["call__tool_name", "call__conversation_key"]
    list_select_related = ["call", "decided_by"]
