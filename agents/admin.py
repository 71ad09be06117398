"""Admin pages of agents: persona, provider, widget settings, per-tool settings and
the "Effective tools" panel that shows what the assistant can do right now."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from agents import admin_calls  # noqa: F401  (the calls' list, conversations named)
from agents.admin_timeline import timeline
from agents.admin_usage import BudgetShown  # and the model prices' pages
from agents.embedding import origin_normalized
from agents.models import Agent, Conversation
from agents.services import identity_secret_new, provider_missing_key
from agents.usage import usage_by_model
from gymnasia.gyms.admin import (
    BusinessScopedAdmin,
    ReadOnlyScopedAdmin,
    SameBusinessForm,
)
from gymnasia.gyms.models import Member
from gymnasia.when import when_written
from tools.crypto import encrypt, masked
from tools.integrations.sources import BUILT_IN, MINDBODY
from tools.models import AgentToolSetting
from tools.presentation import (
    tool_title,
    tool_titled,
)
from tools.registry import published_registry
from tools.selection import (
    REASONS,
    ToolPolicy,
    ToolSelection,
    default_mode,
    offered_tools,
)


class AgentForm(SameBusinessForm):
    class Meta:
        model = Agent
        fields = [
            "business",
            "name",
            "language",
            "instructions",
            "provider",
            "model",
            "max_tool_steps",
            "history_turns",
            "max_output_tokens",
            "allowed_origins",
        ]

    def clean_provider(self) -> str:
        provider = str(self.cleaned_data["provider"])
        missing = provider_missing_key(provider)
        if missing:
            raise forms.ValidationError(
                _("This provider needs %(variable)s in the server's environment.")
                % {"variable": missing}
            )
        return provider

    def clean_allowed_origins(self) -> str:
        lines = [
            line.strip() for line in self.cleaned_data["allowed_origins"].splitlines()
        ]
        origins = []
        for line in filter(None, lines):
            origin = origin_normalized(line)
            if origin is None:
                raise forms.ValidationError(
                    _("%(line)s is not an origin like https://gym.example.")
                    % {"line": line}
                )
            origins.append(origin)
        return "\n".join(origins)


class ToolSettingForm(forms.ModelForm):
    """One tool's row. The tool is shown as text and carried hidden: a row is
    always the same tool's (a saved row keeps its own, whatever is posted)."""

    tool_name = forms.ChoiceField(label=_("tool"), choices=(), widget=forms.HiddenInput)

    class Meta:
        model = AgentToolSetting
        fields = [
            "tool_name",
            "enabled",
            "mode",
            "auto_limit",
            "max_amount",
            "approval_valid_minutes",
        ]
        # Short column headings; the help text says the rest.
        labels = {
            "enabled": _("on"),
            "auto_limit": _("auto up to"),
            "max_amount": _("at most"),
            "approval_valid_minutes": _("valid (min)"),
        }
        help_texts = {
            "enabled": _("The assistant may use this tool."),
            "approval_valid_minutes": _(
                "Minutes a request waits for staff's decision before it expires."
            ),
        }
        widgets = {
            "auto_limit": forms.NumberInput(attrs={"class": "amount", "step": "0.01"}),
            "max_amount": forms.NumberInput(attrs={"class": "amount", "step": "0.01"}),
            "approval_valid_minutes": forms.NumberInput(attrs={"class": "minutes"}),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = cast(forms.ChoiceField, self.fields["tool_name"])
        field.choices = [(t.name, tool_titled(t.name)) for t in published_registry()]

    def clean_tool_name(self) -> str:
        if self.instance.pk:
            return str(self.instance.tool_name)
        return str(self.cleaned_data["tool_name"])

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        tool = published_registry().get(cleaned.get("tool_name", ""))
        if tool is not None and not tool.declaration.amount_argument:
            for name in ("auto_limit", "max_amount"):
                if cleaned.get(name) is not None:
                    self.add_error(name, _("This tool has no amount."))
        auto_limit, max_amount = cleaned.get("auto_limit"), cleaned.get("max_amount")
        if (
            auto_limit is not None
            and max_amount is not None
            and auto_limit > max_amount
        ):
            self.add_error("auto_limit", _("The automatic limit is above the maximum."))
        return cleaned


class ToolSettingInline(admin.TabularInline):
    """Every tool of the registry, configured or not: unconfigured ones come as
    extra rows with the defaults, saved when the owner changes them."""

    model = AgentToolSetting
    form = ToolSettingForm
    template = "admin/agents/agent/tool_settings.html"  # each control names its tool
    can_delete = False
    verbose_name = _("tool")
    verbose_name_plural = _("tools")

    def _missing(self, obj: Agent | None) -> list[str]:
        configured = (
            set(obj.tool_settings.values_list("tool_name", flat=True)) if obj else set()
        )
        return [t.name for t in published_registry() if t.name not in configured]

    def get_extra(
        self, request: HttpRequest, obj: Agent | None = None, **kwargs: Any
    ) -> int:
        return len(self._missing(obj))

    def get_max_num(
        self, request: HttpRequest, obj: Agent | None = None, **kwargs: Any
    ) -> int:
        return len(published_registry().names())

    def get_formset(
        self, request: HttpRequest, obj: Agent | None = None, **kwargs: Any
    ) -> Any:
        formset = super().get_formset(request, obj, **kwargs)
        registry = published_registry()
        initial = []
        missing = set(self._missing(obj))
        for tool in registry:
            if tool.name not in missing:
                continue
            initial.append(
                {
                    "tool_name": tool.name,
                    "mode": default_mode(
                        effect=tool.effect,
                        amount_argument=tool.declaration.amount_argument,
                    ),
                }
            )

        class WithInitial(formset):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kw: Any) -> None:
                kw.setdefault("initial", initial)
                super().__init__(*args, **kw)

        return WithInitial

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.has_perm("tools.view_agenttoolsetting"))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.has_perm("tools.add_agenttoolsetting"))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.has_perm("tools.change_agenttoolsetting"))


def _describe(policy: ToolPolicy) -> str:
    if policy.mode == "auto":
        text = gettext("offered (automatic)")
    elif policy.auto_limit is not None:
        text = gettext("offered (automatic up to %(limit)s, above needs approval)") % {
            "limit": policy.auto_limit
        }
    else:
        text = gettext("offered (needs approval)")
    if policy.max_amount is not None:
        text += " · " + gettext("never above %(max)s") % {"max": policy.max_amount}
    return text


#: Where a tool acts, as the effective-tools panel names it.
SOURCE_LABELS = {
    BUILT_IN: _("Gymnasia (built in)"),
    MINDBODY: _("the gym's Mindbody"),
}


def _offer_described(selection: ToolSelection, name: str) -> str:
    """Whether a tool is offered, and how, or why it is hidden."""
    if name in selection.offered:
        return _describe(selection.offered[name])
    return gettext("hidden: %(reason)s") % {"reason": REASONS[selection.excluded[name]]}


@admin.register(Agent)
class AgentAdmin(BudgetShown, BusinessScopedAdmin):
    form = AgentForm
    inlines = [ToolSettingInline]
    list_display = ["name", "business", "provider", "model", "language", "public_key"]
    list_filter = ["provider", "business"]
    search_fields = ["name", "public_key"]
    readonly_fields = [
        "public_key",
        "identity_secret_hint",
        "effective_tools",
        "budget_this_month",
    ]
    fieldsets = [
        (None, {"fields": ["business", "name", "language", "instructions"]}),
        (
            _("Model"),
            {
                "fields": [
                    "provider",
                    "model",
                    "max_tool_steps",
                    "history_turns",
                    "max_output_tokens",
                ]
            },
        ),
        (
            _("Monthly budget"),
            {
                "fields": [
                    "monthly_budget",
                    "monthly_budget_currency",
                    "monthly_token_budget",
                    "budget_this_month",
                ]
            },
        ),
        (
            _("Widget"),
            {"fields": ["public_key", "identity_secret_hint", "allowed_origins"]},
        ),
        (_("Effective tools"), {"fields": ["effective_tools"]}),
    ]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        self.budget_warned(
            request, self.get_queryset(request).select_related("business")
        )
        return super().changelist_view(request, extra_context)

    def save_model(
        self, request: HttpRequest, obj: Any, form: Any, change: bool
    ) -> None:
        if not obj.identity_secret_encrypted:
            obj.identity_secret_encrypted = encrypt(identity_secret_new())
        super().save_model(request, obj, form, change)

    @admin.display(description=_("identity secret"))
    def identity_secret_hint(self, obj: Agent) -> str:
        if not obj.pk or not obj.identity_secret_encrypted:
            return "—"
        return masked(obj.identity_secret)

    @admin.display(description=_("what the assistant can do now"))
    def effective_tools(self, obj: Agent) -> SafeString | str:
        if not obj.pk:
            return gettext("Save the agent to see its tools.")
        for_members = offered_tools(obj, Member(business_id=obj.business_id))
        for_visitors = offered_tools(obj, None)
        rows = [
            {
                "name": tool.name,
                "title": tool_title(tool.name),
                "is_write": tool.is_write,
                "for_members": _offer_described(for_members, tool.name),
                "for_visitors": _offer_described(for_visitors, tool.name),
                "source": SOURCE_LABELS.get(
                    for_members.sources.get(tool.name, BUILT_IN), ""
                ),
                "note": for_members.notes.get(tool.name, ""),
            }
            for tool in published_registry()
        ]
        return render_to_string(
            "admin/agents/agent/effective_tools.html", {"rows": rows}
        )


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyScopedAdmin):
    """A conversation as a timeline; under each tool call, its verification log."""

    list_display = ["started", "agent", "channel", "member", "language"]
    list_filter = ["agent", "channel", "language"]
    #: The Panel's links to a day's conversations with members' turns or model
    #: steps (``approvals.panel.page``); Django lists each conversation once.
    panel_lookups = frozenset(
        {
            "messages__created_at__gte",
            "messages__created_at__lt",
            "messages__role",
            "messages__role__in",
            "messages__model__gt",
        }
    )
    list_select_related = ["agent", "member"]
    search_fields = ["member__name", "member__external_id"]
    date_hierarchy = "created_at"
    fields = ("agent", "channel", "wa_id", "member", "language", "started")
    readonly_fields = fields
    change_form_template = "admin/agents/conversation/change_form.html"

    @admin.display(description=_("started"), ordering="created_at")
    def started(self, obj: Conversation) -> str:
        """When it began, as people write it at the active clock."""
        return when_written(obj.created_at, year=True)

    class Media:
        css = {"all": ("agents/timeline.css",)}

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        if lookup in self.panel_lookups:
            return True
        return super().lookup_allowed(lookup, value, request)

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Conversation | None = None,
    ) -> HttpResponse:
        if obj is not None:
            context["timeline"] = timeline(obj, request.GET)
            context["usage"] = usage_by_model(
                obj.messages.all(), business_id=obj.business_id
            )
        return super().render_change_form(request, context, add, change, form_url, obj)


# The WhatsApp channel's page lives with the channel.
from agents.whatsapp import admin as whatsapp_admin  # noqa: E402, F401
