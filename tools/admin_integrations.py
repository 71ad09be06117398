"""The admin page of integrations: connecting the built-in kinds, the gym's
Stripe account and its Mindbody site, and testing a connection.

Credentials are write-only: never shown again, only replaced. New Mindbody
credentials, or a new address or served kinds for the stored ones, are tried (a
token issued, the site read) before anything is saved; what Mindbody refused is
told in plain words, never in its own text.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.admin import BusinessScopedAdmin, SameBusinessForm
from tools.integrations.stripe import DEFAULT_TIMEOUT_SECONDS
from tools.models import Integration
from tools.services import (
    integration_credentials_set,
    integration_health_check,
    mindbody_credentials_problem,
    mindbody_credentials_set,
    mindbody_stored_credentials_problem,
    stripe_key_problem,
)

STRIPE_FIELDS = ("secret_key", "base_url", "timeout_seconds")
MINDBODY_CREDENTIALS = (
    "mindbody_site_id",
    "mindbody_api_key",
    "mindbody_username",
    "mindbody_password",
)
MINDBODY_FIELDS = (*MINDBODY_CREDENTIALS, "mindbody_base_url", "mindbody_serves")
SERVABLE_KINDS = [
    (Integration.Kind.CLASSES.value, _("Classes and bookings")),
    (Integration.Kind.MEMBERSHIPS.value, _("Memberships (reading them)")),
]


def _secret(label: Any, help_text: Any) -> forms.CharField:
    return forms.CharField(
        label=label,
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=help_text,
    )


class IntegrationForm(SameBusinessForm):
    """The connection form. Keys and passwords are write-only."""

    secret_key = _secret(
        _("Secret key"), _("Only for Stripe. Leave empty to keep the stored key.")
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
    mindbody_site_id = _secret(
        _("Mindbody site id"),
        _("Only for Mindbody. Give the four together to replace the stored ones."),
    )
    mindbody_api_key = _secret(_("Mindbody API key"), "")
    mindbody_username = _secret(_("Mindbody staff user name"), "")
    mindbody_password = _secret(_("Mindbody staff password"), "")
    mindbody_base_url = forms.ChoiceField(
        label=_("Mindbody API address"),
        required=False,
        help_text=_(
            "The addresses this installation allows (MINDBODY_API_BASES); empty "
            "means the first."
        ),
    )
    mindbody_serves = forms.MultipleChoiceField(
        label=_("Mindbody serves"),
        required=False,
        choices=SERVABLE_KINDS,
        widget=forms.CheckboxSelectMultiple,
        help_text=_(
            "The assistant's tools of these kinds act on Mindbody instead of "
            "Gymnasia's own records. Freezes stay in Gymnasia."
        ),
    )
    member_id_is_client_id = forms.BooleanField(
        label=_("The member id is the Mindbody client id"),
        required=False,
        help_text=_(
            "On: the gym's site signs each member with her Mindbody client id. "
            "Off: a member is matched to the one Mindbody client with her e-mail."
        ),
    )
    mobile_country_code = forms.RegexField(
        label=_("Country code of mobiles written without one"),
        regex=r"^\+?[1-9][0-9]{0,2}$",
        required=False,
        max_length=4,
        error_messages={"invalid": _("Write a country code such as 34 or +34.")},
        help_text=_(
            "Mindbody clients' mobiles are copied to their members' records, so "
            "that a member writing on WhatsApp from hers is recognised. A mobile "
            "written without a country code (600 123 456) is read with this one "
            "(34 for Spain); left empty, such a mobile is not used."
        ),
    )

    class Meta:
        model = Integration
        fields = ["business", "kind", "status"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        config = self.instance.config or {}
        # Read at each form: the operator's lists, never an owner's address.
        for name, bases in (
            ("base_url", settings.STRIPE_API_BASES),
            ("mindbody_base_url", settings.MINDBODY_API_BASES),
        ):
            field = cast(forms.ChoiceField, self.fields[name])
            field.choices = [("", ""), *((b, b) for b in bases)]
            field.initial = config.get("base_url", "")
        self.fields["timeout_seconds"].initial = config.get("timeout_seconds")
        self.fields["mindbody_serves"].initial = config.get("serves", [])
        self.fields["member_id_is_client_id"].initial = config.get(
            "member_id_is_client_id", False
        )
        self.fields["mobile_country_code"].initial = config.get(
            "mobile_country_code", ""
        )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        kind = cleaned.get("kind")
        if kind == Integration.Kind.STRIPE:
            self._clean_stripe(cleaned)
        elif kind == Integration.Kind.MINDBODY:
            self._clean_mindbody(cleaned)
        elif kind:
            for name in (*STRIPE_FIELDS, *MINDBODY_FIELDS):
                if cleaned.get(name):
                    self.add_error(
                        name, _("Built-in integrations take no key or address.")
                    )
        return cleaned

    def _clean_stripe(self, cleaned: dict[str, Any]) -> None:
        key = cleaned.get("secret_key") or ""
        if key:
            problem = stripe_key_problem(key)
            if problem:
                self.add_error("secret_key", problem)
        elif not self.instance.credentials_encrypted:
            self.add_error("secret_key", _("Stripe needs the gym's secret key."))

    def _clean_mindbody(self, cleaned: dict[str, Any]) -> None:
        """New credentials come together and must work: a token is issued and
        the site read with them before anything is saved."""
        given = [name for name in MINDBODY_CREDENTIALS if cleaned.get(name)]
        base_url = cleaned.get("mindbody_base_url") or settings.MINDBODY_API_BASES[0]
        if not given and self.instance.credentials_encrypted:
            if self._mindbody_changed(cleaned, base_url):
                self._mindbody_refused(
                    mindbody_stored_credentials_problem(
                        integration=self.instance, base_url=base_url
                    )
                )
            return
        if len(given) < len(MINDBODY_CREDENTIALS):
            self.add_error(
                None,
                _(
                    "Mindbody needs the site id, the API key and a staff user's "
                    "name and password, all four together."
                ),
            )
            return
        self._mindbody_refused(
            mindbody_credentials_problem(
                site_id=cleaned["mindbody_site_id"],
                api_key=cleaned["mindbody_api_key"],
                username=cleaned["mindbody_username"],
                password=cleaned["mindbody_password"],
                base_url=base_url,
            )
        )

    def _mindbody_changed(self, cleaned: dict[str, Any], base_url: str) -> bool:
        """Whether a stored, not disconnected Mindbody site is saved with another
        address or other kinds to serve (what its tools will rely on)."""
        if cleaned.get("status") == Integration.Status.DISCONNECTED:
            return False
        if self.instance.kind != Integration.Kind.MINDBODY:
            return True
        config = self.instance.config or {}
        stored = config.get("base_url") or settings.MINDBODY_API_BASES[0]
        serves = sorted(cleaned.get("mindbody_serves") or [])
        return base_url != stored or serves != sorted(config.get("serves") or [])

    def _mindbody_refused(self, problem: str | None) -> None:
        if problem:
            self.add_error(
                None,
                gettext("Mindbody did not accept the connection: %(problem)s")
                % {"problem": problem},
            )


@admin.register(Integration)
class IntegrationAdmin(BusinessScopedAdmin):
    form = IntegrationForm
    list_display = ["kind", "status", "business", "last_checked_at", "credentials_hint"]
    list_filter = ["kind", "status", "business"]
    readonly_fields = ["credentials_hint", "last_checked_at", "last_error_in_words"]
    fieldsets = [
        (None, {"fields": ["business", "kind", "status"]}),
        (
            _("Stripe"),
            {"fields": ["secret_key", "credentials_hint", *STRIPE_FIELDS[1:]]},
        ),
        (
            _("Mindbody"),
            {
                "fields": [
                    *MINDBODY_FIELDS,
                    "member_id_is_client_id",
                    "mobile_country_code",
                ]
            },
        ),
        (_("Health"), {"fields": ["last_checked_at", "last_error_in_words"]}),
    ]
    actions = ["test_connection"]

    @admin.display(description=_("last error"))
    def last_error_in_words(self, obj: Integration) -> str:
        return gettext(obj.last_error) if obj.last_error else "—"

    def save_model(
        self, request: HttpRequest, obj: Any, form: Any, change: bool
    ) -> None:
        data = form.cleaned_data
        obj.config = _config(obj.kind, data)
        super().save_model(request, obj, form, change)
        if obj.kind == Integration.Kind.MINDBODY and data.get("mindbody_api_key"):
            mindbody_credentials_set(
                integration=obj,
                site_id=data["mindbody_site_id"],
                api_key=data["mindbody_api_key"],
                username=data["mindbody_username"],
                password=data["mindbody_password"],
            )
            self._check(request, obj, connecting=True)
        elif obj.kind == Integration.Kind.STRIPE and data.get("secret_key"):
            integration_credentials_set(integration=obj, secret_key=data["secret_key"])
            self._check(request, obj, connecting=True)
        elif (
            obj.kind in (Integration.Kind.STRIPE, Integration.Kind.MINDBODY)
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
                % {
                    "integration": integration,
                    "error": gettext(integration.last_error),
                },
                messages.ERROR,
            )

    @admin.action(description=_("Test connection"), permissions=["change"])
    def test_connection(
        self, request: HttpRequest, queryset: QuerySet[Integration]
    ) -> None:
        for integration in queryset:
            self._check(request, integration)


def _config(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """The stored configuration of a kind, from the form's values."""
    config: dict[str, Any] = {}
    if kind == Integration.Kind.STRIPE:
        if data.get("base_url"):
            config["base_url"] = data["base_url"]
        if data.get("timeout_seconds"):
            config["timeout_seconds"] = data["timeout_seconds"]
    elif kind == Integration.Kind.MINDBODY:
        if data.get("mindbody_base_url"):
            config["base_url"] = data["mindbody_base_url"]
        config["serves"] = sorted(data.get("mindbody_serves") or [])
        config["member_id_is_client_id"] = bool(data.get("member_id_is_client_id"))
        code = (data.get("mobile_country_code") or "").lstrip("+")
        if code:
            config["mobile_country_code"] = code
    return config
