from __future__ import annotations

from django.contrib import admin

from gymnasia.gyms.admin import BusinessScopedAdmin
from gymnasia.memberships.models import Membership, MembershipFreeze


@admin.register(Membership)
class MembershipAdmin(BusinessScopedAdmin):
    list_display = ["member", "plan", "status", "starts_on", "ends_on"]
    list_filter = ["status", "plan"]
    list_select_related = ["member"]
    autocomplete_fields = ["member"]
    search_fields = ["member__name", "member__external_id", "plan"]


@admin.register(MembershipFreeze)
class MembershipFreezeAdmin(BusinessScopedAdmin):
    list_display = ["membership", "start", "end", "created_at"]
    list_select_related = ["membership__member"]
    autocomplete_fields = ["membership"]
