from __future__ import annotations

from django.contrib import admin

from gymnasia.classes.models import Booking, ClassSession, ClassType
from gymnasia.gyms.admin import BusinessScopedAdmin


@admin.register(ClassType)
class ClassTypeAdmin(BusinessScopedAdmin):
    list_display = ["name", "business"]
    search_fields = ["name"]


@admin.register(ClassSession)
class ClassSessionAdmin(BusinessScopedAdmin):
    list_display = [
        "class_type",
        "starts_at",
        "ends_at",
        "capacity",
        "instructor",
        "room",
    ]
    list_filter = ["class_type", "is_cancelled"]
    search_fields = ["class_type__name", "instructor", "room"]
    list_select_related = ["class_type"]
    date_hierarchy = "starts_at"


@admin.register(Booking)
class BookingAdmin(BusinessScopedAdmin):
    list_display = ["member", "session", "status", "created_at"]
    list_filter = ["status", "session"]
    list_select_related = ["member", "session__class_type"]
    autocomplete_fields = ["member", "session"]
