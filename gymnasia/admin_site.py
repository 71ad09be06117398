"""The admin site: Django's, with a guard on what its pages pass to the database.

The admin's list filters and autocomplete hand the values of an address's query
string to the database as they come, and PostgreSQL refuses text with a NUL
character: a crafted address (``?tool_name=%00``) was a server error. It is a bad
request instead, answered before any query runs. So is a number past what its
field can hold (``?created_at__year=99999999999``, which Django's date
hierarchy turns into a date without catching the overflow).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any, TypeVar, cast

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponseBase

from gymnasia.text import storable

View = TypeVar("View", bound=Callable[..., HttpResponseBase])


class GymnasiaAdminSite(admin.AdminSite):
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
