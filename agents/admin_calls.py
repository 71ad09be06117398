"""The calls' list (the verification log in admin) with each call's conversation
named as people know it, by its member and start, and linked to its page.

``tools`` owns the calls' pages but knows nothing of conversations (the
dependency rule: ``agents`` → ``tools``), so ``agents`` registers the list with
this column (imported by ``agents.admin``). One query names a whole page."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from agents.models import Conversation
from tools.admin import ToolCallLogAdmin
from tools.models import ToolCallLog


def _ids(keys: set[str]) -> list[uuid.UUID]:
    ids = []
    for key in keys:
        try:
            ids.append(uuid.UUID(key))
        except ValueError:
            continue  # not a conversation of this app (a test's, an import's)
    return ids


class ConversationsNamed(ChangeList):
    """A page of calls, each with its conversation read in one query."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        keys = {call.conversation_key for call in self.result_list}
        named = {
            str(conversation.pk): conversation
            for conversation in Conversation.objects.filter(
                pk__in=_ids(keys)
            ).select_related("member")
        }
        for call in self.result_list:
            call.conversation_named = named.get(call.conversation_key)


class CallAdmin(ToolCallLogAdmin):
    # The member is named in the conversation: one column for both, so every
    # column fits beside the filters on a laptop's screen.
    list_display = [
        *(
            name
            for name in ToolCallLogAdmin.list_display
            if name not in {"member", "conversation_key"}
        ),
        "conversation",
    ]

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return ConversationsNamed

    @admin.display(description=_("conversation"))
    def conversation(self, obj: ToolCallLog) -> SafeString | str:
        conversation = getattr(obj, "conversation_named", None)
        if conversation is None:
            return "—"
        return format_html(
            '<a href="{}">{}</a>',
            reverse("admin:agents_conversation_change", args=[conversation.pk]),
            str(conversation),
        )


admin.site.unregister(ToolCallLog)
admin.site.register(ToolCallLog, CallAdmin)
