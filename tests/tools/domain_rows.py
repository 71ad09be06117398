"""The rows of the gym's own domain (not the harness's logs, which a refused
call writes): what a call that changes nothing leaves as it was."""

from __future__ import annotations

from django.apps import apps

DOMAIN = ("gyms", "nutrition", "classes", "memberships")


def domain_counts() -> dict[str, int]:
    return {
        model._meta.label: model._default_manager.count()
        for label in DOMAIN
        for model in apps.get_app_config(label).get_models()
    }
