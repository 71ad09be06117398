from django.urls import path

from agents import api

urlpatterns = [
    path("api/v1/conversations", api.conversations, name="api-conversations"),
    path(
        "api/v1/conversations/<str:conversation_id>/messages",
        api.messages,
        name="api-messages",
    ),
]
