"""Admin pages of integrations, the verification log (``tools.admin_calls``)
and handoffs."""

from __future__ import annotations

import json
from typing import Any, cast

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.admin import (
    BusinessScopedAdmin,
    ReadOnlyScopedAdmin,
    SameBusinessForm,
)
from tools.admin_calls import ToolCallLogAdmin
from tools.integrations.stripe import DEFAULT_TIMEOUT_SECONDS
from tools.models import Handoff, Integration, ToolCallLog
from tools.presentation import handoff_described
from tools.sentences import case_tried_sentence
from tools.services import (
    integration_credentials_set,
    integration_health_check,
    stripe_key_problem,
)


class IntegrationForm(SameBusinessForm):
    """The connection form. The key is write-only: never shown, only replaced."""

    secret_key = forms.CharField(
        label=_("Secret key"),
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=_("Only for Stripe. Leave empty to keep the stored key."),
    )
    base_url = forms.ChoiceField(
        label=_("API address"),
        required=False,
        help_text=_(
            "Only for Stripe: the addresses this installation allows "
            "(STRIPE_API_BASES); empty means the first."
        ),
    )
    timeout_seconds = forms.FloatField(
        label=_("Timeout (seconds)"),
        required=False,
        min_value=0.1,
        max_value=60,
        help_text=_("Only for Stripe; empty means %(seconds)s.")
        % {"seconds": int(DEFAULT_TIMEOUT_SECONDS)},
    )

    class Meta:
        model = Integration
        fields = ["business", "kind", "status"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        config = self.instance.config or {}
        # Read at each form: the operator's list, never an owner's address.
        bases = settings.STRIPE_API_BASES
        field = cast(forms.ChoiceField, self.fields["base_url"])
        field.choices = [("", ""), *((b, b) for b in bases)]
        self.fields["base_url"].initial = config.get("base_url", "")
        self.fields["timeout_seconds"].initial = config.get("timeout_seconds")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        kind = cleaned.get("kind")
        key = cleaned.get("secret_key") or ""
        if kind == Integration.Kind.STRIPE:
            if key:
                problem = stripe_key_problem(key)
                if problem:
                    self.add_error("secret_key", problem)
            elif not self.instance.credentials_encrypted:
                self.add_error("secret_key", _("Stripe needs the gym's secret key."))
        elif kind:
            for name in ("secret_key", "base_url", "timeout_seconds"):
                if cleaned.get(name):
                    self.add_error(
                        name, _("Built-in integrations take no key or address.")
                    )
        return cleaned


@admin.register(Integration)
class IntegrationAdmin(BusinessScopedAdmin):
    form = IntegrationForm
    list_display = ["kind", "status", "business", "last_checked_at", "credentials_hint"]
    list_filter = ["kind", "status", "business"]
    readonly_fields = ["credentials_hint", "last_checked_at", "last_error"]
    fieldsets = [
        (None, {"fields": ["business", "kind", "status"]}),
        (
            _("Stripe"),
            {
                "fields": [
                    "secret_key",
                    "credentials_hint",
                    "base_url",
                    "timeout_seconds",
                ]
            },
        ),
        (_("Health"), {"fields": ["last_checked_at", "last_error"]}),
    ]
    actions = ["test_connection"]

    def save_model(
        self, request: HttpRequest, obj: Any, form: Any, change: bool
    ) -> None:
        data = form.cleaned_data
        if obj.kind == Integration.Kind.STRIPE:
            config = {}
            if data.get("base_url"):
                config["base_url"] = data["base_url"]
            if data.get("timeout_seconds"):
                config["timeout_seconds"] = data["timeout_seconds"]
            obj.config = config
        else:
            obj.config = {}
        super().save_model(request, obj, form, change)
        if data.get("secret_key"):
            integration_credentials_set(integration=obj, secret_key=data["secret_key"])
            self._check(request, obj, connecting=True)
        elif (
            obj.kind == Integration.Kind.STRIPE
            and obj.status == Integration.Status.CONNECTED
            and "status" in form.changed_data
        ):
            # Connected by hand: a failing account's tools stay hidden until a
            # check passes.
            self._check(request, obj, connecting=True)

    def _check(
        self, request: HttpRequest, integration: Integration, connecting: bool = False
    ) -> None:
        if integration_health_check(integration=integration, connecting=connecting):
            self.message_user(
                request,
                gettext("%(integration)s: the connection works.")
                % {"integration": integration},
                messages.SUCCESS,
            )
        else:
            self.message_user(
                request,
                gettext("%(integration)s: the connection failed: %(error)s")
                % {"integration": integration, "error": integration.last_error},
                messages.ERROR,
            )

    @admin.action(description=_("Test connection"), permissions=["change"])
    def test_connection(
        self, request: HttpRequest, queryset: QuerySet[Integration]
    ) -> None:
        for integration in queryset:
            self._check(request, integration)


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
