"""The owner's page of an agent's WhatsApp channel: the number's ids, the
secrets (written only, R12), the webhook's address to paste into Meta's app
settings, the outcome template, and a test that reads the number from Meta."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, cast

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from agents.models import WhatsAppChannel
from agents.whatsapp.services import whatsapp_channel_test, whatsapp_webhook_path
from gymnasia.gyms.admin import BusinessScopedAdmin, SameBusinessForm
from tools.crypto import encrypt

#: The site's address while a channel's page is drawn (its webhook's address).
_site: ContextVar[str] = ContextVar("whatsapp_admin_site")
SECRETS = {
    "access_token": "access_token_encrypted",
    "app_secret": "app_secret_encrypted",
    "verify_token": "verify_token_encrypted",
}


def _secret_field(label: Any, help_text: Any) -> forms.CharField:
    return forms.CharField(
        label=label,
        required=False,
        strip=True,
        max_length=1000,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=help_text,
    )


class WhatsAppChannelForm(SameBusinessForm):
    """The channel's form: a secret is never shown, only replaced."""

    access_token = _secret_field(
        _("Access token"),
        _(
            "A system user's permanent token with whatsapp_business_messaging. "
            "Leave empty to keep the stored one."
        ),
    )
    app_secret = _secret_field(
        _("App secret"),
        _(
            "From the Meta app's basic settings; it checks that deliveries come "
            "from Meta. Leave empty to keep the stored one."
        ),
    )
    verify_token = _secret_field(
        _("Verify token"),
        _(
            "Any text you choose, typed here and in Meta's webhook settings. "
            "Leave empty to keep the stored one."
        ),
    )
    api_base = forms.ChoiceField(
        label=_("Graph API address"),
        help_text=_("The addresses this installation allows (WHATSAPP_API_BASES)."),
    )

    class Meta:
        model = WhatsAppChannel
        fields = [
            "agent",
            "phone_number_id",
            "business_account_id",
            "api_base",
            "template_name",
            "template_language",
        ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Read at each form: the operator's list, never an owner's address.
        field = cast(forms.ChoiceField, self.fields["api_base"])
        field.choices = [(b, b) for b in settings.WHATSAPP_API_BASES]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for name, column in SECRETS.items():
            if not cleaned.get(name) and not getattr(self.instance, column, ""):
                self.add_error(name, _("The channel needs this to work."))
        return cleaned


@admin.register(WhatsAppChannel)
class WhatsAppChannelAdmin(BusinessScopedAdmin):
    form = WhatsAppChannelForm
    business_path = "agent__business"
    list_display = ["__str__", "agent", "phone_number_id", "tested_at", "test_problem"]
    readonly_fields = [
        "webhook_address",
        "display_phone_number",
        "tested_at",
        "test_problem",
    ]
    fieldsets = [
        (
            None,
            {"fields": ["agent", "phone_number_id", "business_account_id", "api_base"]},
        ),
        (_("Secrets"), {"fields": ["access_token", "app_secret", "verify_token"]}),
        (_("Meta's webhook"), {"fields": ["webhook_address"]}),
        (
            _("Answers after 24 hours"),
            {"fields": ["template_name", "template_language"]},
        ),
        (_("Test"), {"fields": ["display_phone_number", "tested_at", "test_problem"]}),
    ]
    actions = ["test_channel"]

    @admin.display(description=_("Callback URL for Meta"))
    def webhook_address(self, obj: WhatsAppChannel | None) -> str:
        if obj is None or not obj.pk:
            return gettext("Shown once the channel is saved.")
        return _site.get("") + whatsapp_webhook_path(obj)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        # The webhook's address is on the host the owner reached the admin by.
        reset = _site.set(request.build_absolute_uri("/").rstrip("/"))
        try:
            response = super().change_view(request, object_id, form_url, extra_context)
            if isinstance(response, TemplateResponse):
                response.render()  # while the address is known
            return response
        finally:
            _site.reset(reset)

    def save_model(
        self, request: HttpRequest, obj: WhatsAppChannel, form: Any, change: bool
    ) -> None:
        for name, column in SECRETS.items():
            if form.cleaned_data.get(name):
                setattr(obj, column, encrypt(form.cleaned_data[name]))
        super().save_model(request, obj, form, change)
        self._test(request, obj)

    def _test(self, request: HttpRequest, channel: WhatsAppChannel) -> None:
        problem = whatsapp_channel_test(channel=channel)
        if problem:
            self.message_user(
                request,
                gettext("WhatsApp: the test failed: %(problem)s")
                % {"problem": problem},
                messages.ERROR,
            )
        else:
            self.message_user(
                request,
                gettext("WhatsApp: Meta answered for %(number)s.")
                % {"number": channel.display_phone_number or channel.phone_number_id},
                messages.SUCCESS,
            )

    @admin.action(description=_("Test the channel with Meta"), permissions=["change"])
    def test_channel(
        self, request: HttpRequest, queryset: QuerySet[WhatsAppChannel]
    ) -> None:
        for channel in queryset:
            self._test(request, channel)
