"""The verification log's list filters: codes offered in words, and the
outcomes the owners' Panel counts (each a group of statuses), so that a figure's
link lists exactly the calls it counted."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from tools.presentation import (
    CALL_OUTCOMES,
    OUTCOME_LABELS,
    STATUS_LABELS,
    VERIFICATION_LABELS,
    tool_title,
)
from tools.registry import published_registry


class WordsFilter(admin.SimpleListFilter):
    """A filter on a field that records codes, each offered in words."""

    lookup = ""

    def words(self) -> dict[str, Any]:
        raise NotImplementedError

    def lookups(self, request: HttpRequest, model_admin: Any) -> Any:
        return [(code, str(words)) for code, words in self.words().items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
        value = self.value()
        return queryset.filter(**{self.lookup: value}) if value else queryset


class CallStatusFilter(WordsFilter):
    title = _("status")
    parameter_name = lookup = "status"

    def words(self) -> dict[str, Any]:
        return STATUS_LABELS


class VerificationFilter(WordsFilter):
    title = _("verification")
    parameter_name = lookup = "verification"

    def words(self) -> dict[str, Any]:
        return VERIFICATION_LABELS


class ToolFilter(WordsFilter):
    title = _("tool")
    parameter_name = lookup = "tool_name"

    def words(self) -> dict[str, Any]:
        return {tool.name: tool_title(tool.name) for tool in published_registry()}


class OutcomeFilter(admin.SimpleListFilter):
    """How calls ended, as the Panel groups their statuses."""

    title = _("outcome")
    parameter_name = "outcome"

    def lookups(self, request: HttpRequest, model_admin: Any) -> Any:
        return [(code, str(words)) for code, words in OUTCOME_LABELS.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
        statuses = CALL_OUTCOMES.get(self.value() or "")
        return queryset.filter(status__in=statuses) if statuses else queryset
