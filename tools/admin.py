"""Admin pages of the verification log (``tools.admin_calls``) and handoffs
(integrations: ``tools.admin_integrations``, registered with these)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.admin import ReadOnlyScopedAdmin
from tools import admin_integrations  # noqa: F401  (registers Integration's page)
from tools.admin_calls import ToolCallLogAdmin
from tools.models import Handoff, ToolCallLog
from tools.presentation import handoff_described
from tools.sentences import case_tried_sentence


def _code(value: Any) -> SafeString:
    """A record as the machine keeps it, set apart as code."""
    return format_html("<pre><code>{}</code></pre>", value)


admin.register(ToolCallLog)(ToolCallLogAdmin)


#: A case's page: what it is about and what is known, in words; what was tried
#: as the harness recorded it, set apart as code.
HANDOFF_FIELDS: tuple[str, ...] = (
    "created_at",
    "business",
    "member",
    "conversation_key",
    "case",
    "what_is_known",
    "tried_in_words",
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

    @admin.display(description=_("what was asked"))
    def tried_in_words(self, obj: Handoff) -> str:
        """A write's case as its request reads (``tools.sentences``)."""
        return case_tried_sentence(obj) or "—"

    @admin.display(description=_("what was tried"))
    def tried_recorded(self, obj: Handoff) -> SafeString | str:
        if not obj.tried:
            return "—"
        return _code(json.dumps(obj.tried, ensure_ascii=False, sort_keys=True))
