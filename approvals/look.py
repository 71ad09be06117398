"""The admin's look on the staff inbox's pages, so staff live in one product.

The inbox's templates extend the admin's base template (its header, colours,
light and dark themes, its ``<main>``); this is the context that template reads.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


def admin_look(request: HttpRequest) -> dict[str, Any]:
    """The admin's context of every page (the site's name, the user's links and
    theme switch, how many requests wait), without its side bar of apps, which
    would crowd a phone and is not the inbox's."""
    site = admin.site
    if hasattr(site, "page_context"):  # Gymnasia's own admin site
        return site.page_context(request)
    return {**site.each_context(request), "is_nav_sidebar_enabled": False}
