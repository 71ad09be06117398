"""Admin pages of the gym domain, scoped to the businesses of the signed-in user.

Owners see and edit their own business's rows; staff only see them; nobody reaches
another business's rows, by construction of the querysets and the choice lists.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Business, Member, StaffRole
from gymnasia.gyms.selectors import businesses_for_user

OWNER_ROLES = (StaffRole.Role.OWNER,)
ANY_ROLE = (StaffRole.Role.OWNER, StaffRole.Role.STAFF)


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


class BusinessScopedAdmin(admin.ModelAdmin):
    """A model admin whose rows all have a ``business`` foreign key."""

    form = SameBusinessForm
    business_path = "business"
    #: Rows members create through the assistant are shown, not edited here.
    read_only_for_owners = False

    def _businesses(
        self, request: HttpRequest, roles: tuple[str, ...]
    ) -> QuerySet[Business]:
        return businesses_for_user(user=request.user, roles=roles)

    def _has_role(
        self, request: HttpRequest, roles: tuple[str, ...], obj: Any = None
    ) -> bool:
        if request.user.is_superuser:
            return True
        businesses = self._businesses(request, roles)
        if obj is None:
            return businesses.exists()
        return businesses.filter(pk=self._business_id(obj)).exists()

    def _business_id(self, obj: Any) -> int:
        target = obj
        for part in self.business_path.split("__"):
            target = getattr(target, part)
        return int(target.pk)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(
            **{f"{self.business_path}__in": self._businesses(request, ANY_ROLE)}
        )

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._has_role(request, ANY_ROLE)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._has_role(request, ANY_ROLE, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return not self.read_only_for_owners and self._has_role(request, OWNER_ROLES)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self.read_only_for_owners and self._has_role(
            request, OWNER_ROLES, obj
        )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self.read_only_for_owners and self._has_role(
            request, OWNER_ROLES, obj
        )

    def formfield_for_foreignkey(
        self, db_field: models.ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> Any:
        if not request.user.is_superuser:
            related = db_field.related_model
            owned = self._businesses(request, OWNER_ROLES)
            if related is Business:
                kwargs["queryset"] = owned
            elif any(f.name == "business" for f in related._meta.get_fields()):
                kwargs["queryset"] = related._default_manager.filter(business__in=owned)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Business)
class BusinessAdmin(BusinessScopedAdmin):
    list_display = ["name", "slug", "time_zone", "language"]
    business_path = "pk"
    prepopulated_fields = {"slug": ["name"]}

    def _business_id(self, obj: Any) -> int:
        return int(obj.pk)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = admin.ModelAdmin.get_queryset(self, request)
        if request.user.is_superuser:
            return qs
        return qs.filter(pk__in=self._businesses(request, ANY_ROLE))

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return bool(request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)


@admin.register(StaffRole)
class StaffRoleAdmin(BusinessScopedAdmin):
    list_display = ["user", "business", "role"]
    list_filter = ["role"]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return bool(request.user.is_superuser)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)


@admin.register(Member)
class MemberAdmin(BusinessScopedAdmin):
    list_display = ["name", "external_id", "email", "language", "business"]
    search_fields = ["name", "external_id", "email"]
    list_filter = ["language"]
