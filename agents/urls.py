from django.urls import path

from agents import api, openapi, views
from agents.whatsapp.webhook import whatsapp_webhook

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
    path(
        "channels/whatsapp/<str:public_key>/",
        whatsapp_webhook,
        name="whatsapp-webhook",
    ),
]
