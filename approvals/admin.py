from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from approvals.models import Decision, Event, WebhookDelivery, WebhookEndpoint
from approvals.presentation import decision_reason_described, request_described
from approvals.webhooks import (
    SECRET_MIN_LENGTH,
    webhook_delivery_problem,
    webhook_secret_masked,
    webhook_secret_problem,
    webhook_url_masked,
    webhook_url_problem,
)
from gymnasia.gyms.admin import (
    OWNER_ROLES,
    BusinessScopedAdmin,
    ReadOnlyScopedAdmin,
    SameBusinessForm,
    ScopedRelatedFilter,
)
from gymnasia.gyms.selectors import businesses_for_user
from tools.admin_filters import ToolFilter
from tools.crypto import encrypt
from tools.naming import arguments_changed
from tools.presentation import tool_title


class RequestToolFilter(ToolFilter):
    """A decision's request by its tool, named by its title."""

    parameter_name = "tool"
    lookup = "call__tool_name"


class UnchangedFilter(admin.SimpleListFilter):
    """Decisions on requests as the model made them, or on staff's corrections
    (a correction's approval is not an approval "unchanged")."""

    title = _("request")
    parameter_name = "made_by"

    def lookups(self, request: HttpRequest, model_admin: Any) -> Any:
        return [
            ("assistant", _("as the assistant made it")),
            ("correction", _("a correction by staff")),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
        if self.value() in ("assistant", "correction"):
            return queryset.filter(call__corrects__isnull=self.value() == "assistant")
        return queryset


#: A decision's page: the request, what staff decided and why, what changed.
DECISION_FIELDS: tuple[str, ...] = (
    "decided_at",
    "kind",
    "request",
    "request_said",
    "decided_by",
    "reason_in_words",
    "corrected_to",
    "changes",
)


@admin.register(Decision)
class DecisionAdmin(ReadOnlyScopedAdmin):
    """Staff's decisions on requests, as they were made; nobody edits them."""

    list_display = ["decided_at", "kind", "request", "decided_by", "reason_in_words"]
    list_filter = ["kind", RequestToolFilter, UnchangedFilter]
    search_fields = ["call__tool_name", "call__conversation_key"]
    list_select_related = ["call", "decided_by"]
    fields = DECISION_FIELDS
    readonly_fields = DECISION_FIELDS

    @admin.display(description=_("request"), ordering="call__tool_name")
    def request(self, obj: Decision) -> SafeString:
        url = reverse("admin:tools_toolcalllog_change", args=[obj.call_id])
        return format_html('<a href="{}">{}</a>', url, tool_title(obj.call.tool_name))

    @admin.display(description=_("what was asked"))
    def request_said(self, obj: Decision) -> str:
        return request_described(obj.call)

    @admin.display(description=_("reason"))
    def reason_in_words(self, obj: Decision) -> str:
        return decision_reason_described(status=obj.kind, reason=obj.reason)

    @admin.display(description=_("changes"))
    def changes(self, obj: Decision) -> str:
        if not obj.difference:
            return "—"
        call = obj.call
        return arguments_changed(
            obj.difference, business=call.business, member=call.member
        )


def endpoint_label(endpoint: WebhookEndpoint) -> str:
    """An endpoint as lists name it: its description, else its masked address."""
    return endpoint.description or webhook_url_masked(endpoint.url)


class OwnersOnlyAdmin(BusinessScopedAdmin):
    """Rows only a gym's owners see: a webhook's address is a credential itself
    (Slack's carries one). Lists hold the gyms the user owns; a row of a gym
    where the user is staff is found and refused (403), as on every page."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(business__in=self._businesses(request, OWNER_ROLES))

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Any:
        queryset = BusinessScopedAdmin.get_queryset(self, request)
        opts = self.model._meta
        field = opts.pk if from_field is None else opts.get_field(from_field)
        try:
            return queryset.get(**{field.name: field.to_python(object_id)})
        except (self.model.DoesNotExist, ValidationError, ValueError):
            return None

    def has_module_permission(self, request: HttpRequest) -> bool:
        allowed = super().has_module_permission(request)
        return allowed and self._has_role(request, OWNER_ROLES)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_view_permission(request, obj)
        return allowed and self._has_role(request, OWNER_ROLES, obj)


class WebhookEndpointForm(SameBusinessForm):
    """An endpoint: its address and signing secret are write-only once saved
    (an empty field keeps the stored one), and the address is judged as a
    delivery judges it."""

    url = forms.URLField(
        label=_("address"),
        max_length=500,
        required=False,
        assume_scheme="https",
    )
    events = forms.MultipleChoiceField(
        label=_("events"),
        choices=Event.Type.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text=_("None chosen: every event."),
    )
    secret = forms.CharField(
        label=_("signing secret"),
        required=False,
        widget=forms.PasswordInput(
            render_value=False, attrs={"autocomplete": "new-password"}
        ),
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["business", "description", "url", "events", "active"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["description"].required = True
        self.fields["description"].help_text = _(
            "What it is, e.g. Slack #front-desk; lists name the endpoint by it."
        )
        self.fields["secret"].help_text = _(
            "At least %(count)s characters; the receiver checks each request's "
            "Gymnasia-Signature header with it."
        ) % {"count": SECRET_MIN_LENGTH}
        self.fields["url"].help_text = _(
            "Where events are POSTed: https only, on the public internet."
        )
        if self.instance.pk:
            self.initial["url"] = ""  # never sent back to the page
            self.fields["url"].help_text = _(
                "Stored: %(address)s. Leave empty to keep it."
            ) % {"address": webhook_url_masked(self.instance.url)}
            self.fields["secret"].help_text = _(
                "Stored: %(secret)s. Leave empty to keep it."
            ) % {"secret": webhook_secret_masked(self.instance)}

    def clean_url(self) -> str:
        url = self.cleaned_data.get("url") or ""
        if not url:
            if self.instance.pk:
                return self.instance.url
            raise ValidationError(self.fields["url"].error_messages["required"])
        problem = webhook_url_problem(url)
        if problem:
            raise ValidationError(problem, "address")
        return url

    def clean_secret(self) -> str:
        secret = self.cleaned_data.get("secret") or ""
        if not secret:
            if self.instance.secret_encrypted:
                return ""
            raise ValidationError(self.fields["secret"].error_messages["required"])
        problem = webhook_secret_problem(secret)
        if problem:
            raise ValidationError(problem, "weak")
        return secret


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(OwnersOnlyAdmin):
    """The gym's own tools that hear of requests and cases, for its owners."""

    form = WebhookEndpointForm
    list_display = [
        "description",
        "address",
        "events_heard",
        "active",
        "secret_hint",
        "delivery_log",
    ]
    list_filter = ["active"]
    search_fields = ["description"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return (
            super().get_queryset(request).annotate(delivery_count=Count("deliveries"))
        )

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = ["business", "description", "url", "events", "active", "secret"]
        if obj is None:
            return [(None, {"fields": fields})]
        return [
            (None, {"fields": fields}),
            (_("Deliveries"), {"fields": ["delivery_log"]}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["delivery_log"] if obj is not None else []

    def save_model(
        self, request: HttpRequest, obj: Any, form: Any, change: bool
    ) -> None:
        secret = form.cleaned_data.get("secret")
        if secret:
            obj.secret_encrypted = encrypt(secret)
        super().save_model(request, obj, form, change)

    @admin.display(description=_("address"))
    def address(self, obj: WebhookEndpoint) -> str:
        return webhook_url_masked(obj.url)

    @admin.display(description=_("events"))
    def events_heard(self, obj: WebhookEndpoint) -> str:
        if not obj.events:
            return gettext("all")
        labels = dict(Event.Type.choices)
        return ", ".join(str(labels.get(kind, kind)) for kind in obj.events)

    @admin.display(description=_("signing secret"))
    def secret_hint(self, obj: WebhookEndpoint) -> str:
        return webhook_secret_masked(obj)

    @admin.display(description=_("delivery log"))
    def delivery_log(self, obj: WebhookEndpoint) -> str:
        count = getattr(obj, "delivery_count", None)
        if count is None:
            count = obj.deliveries.count()
        url = reverse("admin:approvals_webhookdelivery_changelist")
        return format_html(
            '<a href="{}?endpoint__id__exact={}">{}</a>',
            url,
            obj.pk,
            ngettext("%(count)s delivery", "%(count)s deliveries", count)
            % {"count": count},
        )


class EndpointFilter(ScopedRelatedFilter):
    """The endpoints of the gyms the user owns, named as lists name them."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> Any:
        endpoints = WebhookEndpoint.objects.all()
        if not request.user.is_superuser:
            owned = businesses_for_user(user=request.user, roles=OWNER_ROLES)
            endpoints = endpoints.filter(business__in=owned)
        return [(endpoint.pk, endpoint_label(endpoint)) for endpoint in endpoints]


#: What the delivery log shows of one delivery (nothing the receiver said).
DELIVERY_FIELDS = (
    "created_at",
    "event_type",
    "event_id",
    "endpoint_name",
    "status",
    "attempts",
    "last_attempt_at",
    "last_status_code",
    "problem",
    "delivered_at",
)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(OwnersOnlyAdmin, ReadOnlyScopedAdmin):
    """The delivery log an owner reads: each event sent to each endpoint, its
    tries and how they ended (never what the receiver said)."""

    list_display = [
        field for field in DELIVERY_FIELDS if field not in {"last_attempt_at"}
    ]
    list_filter = [("endpoint", EndpointFilter), "status", "event__type"]
    list_select_related = ["event", "endpoint"]
    fields = DELIVERY_FIELDS
    readonly_fields = DELIVERY_FIELDS

    @admin.display(description=_("event"), ordering="event__type")
    def event_type(self, obj: WebhookDelivery) -> SafeString:
        """In words, then as the receiver reads it in the payload's ``type``."""
        return format_html(
            "{} <code>{}</code>", obj.event.get_type_display(), obj.event.type
        )

    @admin.display(description=_("event id"))
    def event_id(self, obj: WebhookDelivery) -> str:
        return str(obj.event_id)

    @admin.display(description=_("endpoint"))
    def endpoint_name(self, obj: WebhookDelivery) -> str:
        return endpoint_label(obj.endpoint)

    @admin.display(description=_("last problem"))
    def problem(self, obj: WebhookDelivery) -> str:
        return webhook_delivery_problem(obj)
