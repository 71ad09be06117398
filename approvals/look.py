"""The admin's look on the staff inbox's pages, so staff live in one product.

The inbox's templates extend the admin's base template (its header, colours,
light and dark themes, its ``<main>``); this is the context that template reads.
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib import admin
from django.http import HttpRequest

from gymnasia.admin_site import GymnasiaAdminSite


def admin_look(request: HttpRequest) -> dict[str, Any]:
    """The admin's context of every page (the site's name, the user's links and
    theme switch, how many requests wait), without its side bar of apps, which
    would crowd a phone and is not the inbox's."""
    return cast(GymnasiaAdminSite, admin.site).page_context(request)
