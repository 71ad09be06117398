"""The Panel's addresses, under ``/admin/panel/``: admin pages, signed in as
every admin page is."""

from django.contrib import admin
from django.urls import path

from approvals.panel import views

app_name = "panel"

urlpatterns = [
    path("", admin.site.admin_view(views.panel), name="panel"),
    path(
        "verification.csv",
        admin.site.admin_view(views.verification_csv),
        name="verification-csv",
    ),
    path(
        "switch/<int:setting_id>",
        admin.site.admin_view(views.switch),
        name="switch",
    ),
]
