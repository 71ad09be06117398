from django.urls import path

from approvals import links, preferences, views

app_name = "approvals"

urlpatterns = [
    path("", views.inbox, name="inbox"),
    path("link/page/<str:key>", links.link_page, name="link-page"),
    path("link/<str:token>", links.link, name="link"),
    path("notifications", preferences.preferences, name="preferences"),
    path("approve-selected", views.approve_selected, name="approve-selected"),
    path("<uuid:action_id>/correct", views.correct, name="correct"),
    path("<uuid:action_id>/<str:decision>", views.decide, name="decide"),
    path("handoffs/", views.handoffs, name="handoffs"),
    path("handoffs/<uuid:handoff_id>/resolve", views.resolve, name="resolve"),
]
