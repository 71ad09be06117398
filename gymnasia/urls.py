"""URLs of the project."""

from django.contrib import admin
from django.urls import include, path

from gymnasia import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.health, name="health"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/panel/", include("approvals.panel.urls")),
    path("admin/", admin.site.urls),
    path("", include("agents.urls")),
    path("inbox/", include("approvals.urls")),
]
