from django.urls import path

from agents import api, openapi, views

urlpatterns = [
    path("api/v1/conversations", api.conversations, name="api-conversations"),
    path(
        "api/v1/conversations/<str:conversation_id>/messages",
        api.messages,
        name="api-messages",
    ),
    path("api/v1/openapi.json", openapi.openapi, name="api-openapi"),
    path("widget.js", views.widget_script, name="widget-script"),
    path("widget/<str:public_key>/", views.widget_page, name="widget-page"),
    path("demo/", views.demo_site, name="demo-site"),
]
