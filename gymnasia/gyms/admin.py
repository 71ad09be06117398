"""Admin pages of the gym domain, and the base of every business-scoped admin page.

Two checks meet on every page: the Django permission the user's group grants
(``gymnasia.roles``), and the user's role at the object's business. Querysets,
foreign-key choices, autocompletes and list filters only hold the user's businesses'
rows, and another business's object is a 404, indistinguishable from a missing one.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Member, StaffRole
from gymnasia.gyms.selectors import businesses_for_user

#: What a person changes of how they are told (here, and on the inbox's page).
NOTIFICATION_FIELDS: list[str | list[str] | tuple[str, ...] | tuple[()]] = [
    "email_notifications",
    "notify_requests",
    "notify_handoffs",
    "notify_reminders",
    "quiet_from",
    "quiet_until",
    "language",
]
OWNER_ROLES = (StaffRole.Role.OWNER,)
ANY_ROLE = (StaffRole.Role.OWNER, StaffRole.Role.STAFF)


def has_business_field(model: type[Model]) -> bool:
    return any(f.name == "business" for f in model._meta.get_fields())


class SameBusinessForm(forms.ModelForm):
    """Refuses a row that points at another business's objects."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        business = cleaned.get("business") or getattr(self.instance, "business", None)
        if business is None:
            return cleaned
        for name, value in cleaned.items():
            owner_id = getattr(value, "business_id", None)
            if name != "business" and owner_id is not None and owner_id != business.pk:
                self.add_error(name, _("This belongs to another business."))
        return cleaned


class ScopedRelatedFilter(admin.RelatedFieldListFilter):
    """A list filter whose choices are only the user's businesses' objects."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> Any:
        related = field.related_model
        if request.user.is_superuser or not (
            related is Business or has_business_field(related)
        ):
            return super().field_choices(field, request, model_admin)
        businesses = businesses_for_user(user=request.user)
        qs = (
            related._default_manager.filter(pk__in=businesses)
            if related is Business
            else related._default_manager.filter(business__in=businesses)
        )
        return [(obj.pk, str(obj)) for obj in qs]


def roles_held(request: HttpRequest) -> frozenset[tuple[int, str]]:
    """The user's roles, as (business id, role), read once per request: a page
    asks each model admin whether the user may see it (the admin's list of
    apps alone asks every one), which was a query each."""
    held = getattr(request, "_gym_roles_held", None)
    user_id = request.user.pk
    if user_id is None:
        return frozenset()
    if held is None:
        held = frozenset(
            StaffRole.objects.filter(user_id=user_id).values_list("business_id", "role")
        )
        request._gym_roles_held = held  # type: ignore[attr-defined]
    return held


class BusinessScopedAdmin(admin.ModelAdmin):
    """A model admin whose rows belong to a business through ``business_path``."""

    form = SameBusinessForm
    business_path = "business"

    def get_list_filter(self, request: HttpRequest) -> Any:
        return [
            (name, ScopedRelatedFilter) if self._is_relation(name) else name
            for name in super().get_list_filter(request)
        ]

    def _is_relation(self, name: Any) -> bool:
        if not isinstance(name, str) or "__" in name:
            return False
        try:
            return bool(self.model._meta.get_field(name).is_relation)
        except FieldDoesNotExist:
            return False

    def _businesses(
        self, request: HttpRequest, roles: tuple[str, ...]
    ) -> QuerySet[Business]:
        return businesses_for_user(user=request.user, roles=roles)

    def _business_id(self, obj: Any) -> int:
        target = obj
        for part in self.business_path.split("__"):
            target = getattr(target, part)
        return int(target.pk)

    def _has_role(
        self, request: HttpRequest, roles: tuple[str, ...], obj: Any = None
    ) -> bool:
        if request.user.is_superuser:
            return True
        held = {business for business, role in roles_held(request) if role in roles}
        if obj is None:
            return bool(held)
        return self._business_id(obj) in held

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(
            **{f"{self.business_path}__in": self._businesses(request, ANY_ROLE)}
        )

    def has_module_permission(self, request: HttpRequest) -> bool:
        return super().has_module_permission(request) and self._has_role(
            request, ANY_ROLE
        )

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_view_permission(request, obj)
        return allowed and self._has_role(request, ANY_ROLE, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        allowed = super().has_add_permission(request, *args)
        return allowed and self._has_role(request, OWNER_ROLES)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_change_permission(request, obj)
        return allowed and self._has_role(request, OWNER_ROLES, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_delete_permission(request, obj)
        return allowed and self._has_role(request, OWNER_ROLES, obj)

    def get_action(self, action: Any) -> tuple[Callable[..., Any], str, str] | None:
        """Each action, run only when the user may do it at the business of
        every row selected: asked of an owner at one gym who is staff at
        another, an action that changes or deletes refuses a selection that
        holds the other gym's rows, whole (Django asks the permission once,
        without the rows)."""
        found = super().get_action(action)
        if found is None:
            return None
        function, name, description = found
        needs = set(getattr(function, "allowed_permissions", ()))
        if name == "delete_selected":
            needs.add("delete")
        if not needs - {"view"}:
            return found

        @wraps(function)
        def scoped(
            modeladmin: Any, request: HttpRequest, queryset: QuerySet[Any]
        ) -> Any:
            if not request.user.is_superuser:
                owned = self._businesses(request, OWNER_ROLES)
                path = f"{self.business_path}__in"
                if queryset.exclude(**{path: owned}).exists():
                    self.message_user(
                        request,
                        _(
                            "Nothing was done: some of the rows chosen belong to a gym "
                            "you do not own."
                        ),
                        messages.ERROR,
                    )
                    return None
            return function(modeladmin, request, queryset)

        return scoped, name, description

    def formfield_for_foreignkey(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> Any:
        if not request.user.is_superuser:
            related = db_field.related_model
            owned = self._businesses(request, OWNER_ROLES)
            if related is Business:
                kwargs["queryset"] = owned
            elif has_business_field(related):
                kwargs["queryset"] = related._default_manager.filter(business__in=owned)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def _visible_or_404(self, request: HttpRequest, object_id: str | None) -> None:
        if (
            object_id is not None
            and self.get_object(request, unquote(object_id)) is None
        ):
            raise Http404(_("No such object."))

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        self._visible_or_404(request, object_id)
        return super().change_view(request, object_id, form_url, extra_context)

    def delete_view(
        self,
        request: HttpRequest,
        object_id: str,
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        self._visible_or_404(request, object_id)
        return super().delete_view(request, object_id, extra_context)

    def history_view(
        self,
        request: HttpRequest,
        object_id: str,
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        self._visible_or_404(request, object_id)
        return super().history_view(request, object_id, extra_context)


class ReadOnlyScopedAdmin(BusinessScopedAdmin):
    """Records the harness writes; people read them here and change them elsewhere."""

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Business)
class BusinessAdmin(BusinessScopedAdmin):
    list_display = ["name", "slug", "time_zone", "language"]
    search_fields = ["name", "slug"]
    business_path = "pk"
    prepopulated_fields = {"slug": ["name"]}

    def _business_id(self, obj: Any) -> int:
        return int(obj.pk)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = admin.ModelAdmin.get_queryset(self, request)
        if request.user.is_superuser:
            return qs
        return qs.filter(pk__in=self._businesses(request, ANY_ROLE))


@admin.register(StaffRole)
class StaffRoleAdmin(BusinessScopedAdmin):
    """Who works at a gym, and how each person is told of what waits for them:
    an owner changes the latter; who has which role is the operator's."""

    list_display = ["user", "business", "role", "email_notifications", "language"]
    list_filter = ["role", "business", "email_notifications"]
    fieldsets = [
        (None, {"fields": ["business", "user", "role"]}),
        (_("How this person is told"), {"fields": NOTIFICATION_FIELDS}),
    ]

    def get_readonly_fields(
        self, request: HttpRequest, obj: Any = None
    ) -> list[str] | tuple[str, ...]:
        if request.user.is_superuser:
            return ()
        return ["business", "user", "role"]


@admin.register(Member)
class MemberAdmin(BusinessScopedAdmin):
    list_display = ["name", "external_id", "email", "language", "business"]
    search_fields = ["name", "external_id", "email"]
    list_filter = ["language", "business"]
