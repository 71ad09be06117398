"""The admin site: Django's, with a guard on what its pages pass to the database.

The admin's list filters and autocomplete hand the values of an address's query
string to the database as they come, and PostgreSQL refuses text with a NUL
character: a crafted address (``?tool_name=%00``) was a server error. It is a bad
request instead, answered before any query runs. So is a number past what its
field can hold (``?created_at__year=99999999999``, which Django's date
hierarchy turns into a date without catching the overflow).

Its header names Gymnasia and, for staff of a gym, links to their inbox with
how many requests wait there.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any, TypeVar, cast

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponseBase
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from gymnasia.text import storable

View = TypeVar("View", bound=Callable[..., HttpResponseBase])

#: Django admin's sentences that put an article of one gender before any model's
#: name (Spanish read «El integración»). This project's catalogue comes before
#: Django's, and words them so that every name reads right.
ADMIN_SENTENCES = (
    gettext_noop("The {name} “{obj}” was added successfully."),
    gettext_noop(
        "The {name} “{obj}” was added successfully. You may add another {name} below."
    ),
    gettext_noop("The {name} “{obj}” was changed successfully."),
    gettext_noop(
        "The {name} “{obj}” was changed successfully. You may edit it again below."
    ),
    gettext_noop(
        "The {name} “{obj}” was changed successfully. You may add another {name} below."
    ),
    gettext_noop("You may edit it again below."),
    gettext_noop("The %(name)s “%(obj)s” was deleted successfully."),
    gettext_noop("Added {name} “{object}”."),
    gettext_noop("Deleted {name} “{object}”."),
)


class GymnasiaAdminSite(admin.AdminSite):
    site_header = "Gymnasia"
    site_title = "Gymnasia"
    index_title = _("Administration")

    def each_context(self, request: HttpRequest) -> dict[str, Any]:
        """Django's context of every admin page, and how many requests wait at
        the user's gyms, for the header's link to the staff inbox
        (``templates/admin/base_site.html``; ``None``, no link, for a user who
        works at no gym). One query, and the list of apps."""
        return {
            **self.page_context(request),
            "available_apps": self.get_app_list(request),
            "is_nav_sidebar_enabled": self.enable_nav_sidebar,
        }

    def page_context(self, request: HttpRequest) -> dict[str, Any]:
        """The context of every admin page but the list of apps, which only the
        side bar reads and which asks each model admin whether the user may see
        it: for the pages without the side bar (the staff inbox, the Panel)."""
        # Imported here: this module is loaded with the app registry, before
        # any model can be.
        from approvals.selectors import pending_actions_count

        script_name = request.META["SCRIPT_NAME"]
        return {
            "site_title": self.site_title,
            "site_header": self.site_header,
            "site_url": script_name
            if self.site_url == "/" and script_name
            else self.site_url,
            "has_permission": self.has_permission(request),
            "available_apps": [],
            "is_popup": False,
            "is_nav_sidebar_enabled": False,
            "log_entries": self.get_log_entries(request),
            "inbox_waiting": pending_actions_count(user=request.user),
        }

    def admin_view(self, view: View, cacheable: bool = False) -> View:
        """Django's wrapping of every admin page (sign-in and permission first),
        around a view that refuses a query string no database column can take."""

        def guarded(
            request: HttpRequest, *args: Any, **kwargs: Any
        ) -> HttpResponseBase:
            if not storable(dict(request.GET.lists())):
                raise BadRequest("The query string holds a NUL character.")
            try:
                return view(request, *args, **kwargs)
            except OverflowError:
                raise BadRequest("A number in the query string is too large.") from None

        return super().admin_view(cast(View, update_wrapper(guarded, view)), cacheable)


class GymnasiaAdminConfig(AdminConfig):
    default_site = "gymnasia.admin_site.GymnasiaAdminSite"
