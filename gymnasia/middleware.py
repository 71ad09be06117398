"""Middleware that keeps async requests on the event loop.

WhiteNoise's own middleware is sync-only; one sync middleware makes Django run the
whole request, async views included, through a small thread pool, so a slow provider
would hold a thread for every turn. ``StaticFilesMiddleware`` answers static files as
WhiteNoise does and hands every other request on without leaving the event loop.

Django's own middleware, under ASGI, hands each of its hooks to a thread and back
(about a quarter of a millisecond of CPU a hook; fourteen such hooks were a fifth of
a turn's cost). The ones below run their hooks on the event loop when the hook only
computes from the request and the response (headers, cookies, the URL resolver), and
in a thread, as Django does, when it may read or write the database: a session or
messages that the request changed. Measured with
``tests/bench/bench_turns.py`` (200 concurrent turns, PostgreSQL, three runs of
three rounds, alternated): with Django's own classes 2.81-3.09 s and 16.6-17.7 ms
of web CPU a turn, with these 2.46-2.64 s and 13.8-15.4 ms; the target is under
3 s.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Awaitable, Callable
from typing import Any, cast

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from csp import middleware as csp
from django.conf import settings
from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.core.checks import Warning
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponseBase
from django.middleware import clickjacking, common, csrf, locale, security
from django.utils import timezone
from django.utils.deprecation import MiddlewareMixin
from django.utils.module_loading import import_string
from whitenoise.middleware import WhiteNoiseMiddleware

from gymnasia.gyms.selectors import time_zone_for_user


class StaticFilesMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.whitenoise = WhiteNoiseMiddleware(get_response)
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def _static(self, request: HttpRequest) -> HttpResponseBase | None:
        whitenoise = self.whitenoise
        if whitenoise.autorefresh:
            static_file = whitenoise.find_file(request.path_info)
        else:
            static_file = whitenoise.files.get(request.path_info)
        return (
            whitenoise.serve(static_file, request) if static_file is not None else None
        )

    def __call__(
        self, request: HttpRequest
    ) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if self.is_async:
            return self._acall(request)
        return self._static(request) or self.get_response(request)

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        response = self._static(request)
        if response is not None:
            return response
        result: HttpResponseBase = await self.get_response(request)
        return result


class HooksOnTheLoop(MiddlewareMixin):
    """Mixed into a Django middleware whose ``process_request`` neither touches the
    database nor blocks, nor its ``process_response`` unless
    ``response_may_block`` says so: in async mode they are called directly, as the
    sync path calls them. (A ``process_view`` is still adapted by Django's handler.)"""

    def __call__(self, request: HttpRequest) -> Any:
        if self.async_mode:
            return self._on_the_loop(request)
        return super().__call__(request)

    async def _on_the_loop(self, request: HttpRequest) -> Any:
        process_request = getattr(self, "process_request", None)
        process_response = getattr(self, "process_response", None)
        response = process_request(request) if process_request else None
        # In async mode Django hands this middleware an async ``get_response``.
        response = response or await cast(
            Awaitable[HttpResponseBase], self.get_response(request)
        )
        if process_response is None:
            return response
        if self.response_may_block(request):
            return await sync_to_async(process_response)(request, response)
        return process_response(request, response)

    def response_may_block(self, request: HttpRequest) -> bool:
        return False


class SecurityMiddleware(HooksOnTheLoop, security.SecurityMiddleware):
    pass


class SessionMiddleware(HooksOnTheLoop, sessions.SessionMiddleware):
    """Saves the session, in a thread, only when the request changed it."""

    def response_may_block(self, request: HttpRequest) -> bool:
        session = getattr(request, "session", None)
        return session is not None and (
            session.modified or settings.SESSION_SAVE_EVERY_REQUEST
        )


class MessageMiddleware(HooksOnTheLoop, messages.MessageMiddleware):
    """Stores messages (in a cookie, or the session when they do not fit), in a
    thread, only when the request read or added some."""

    def response_may_block(self, request: HttpRequest) -> bool:
        storage = getattr(request, "_messages", None)
        return storage is not None and (storage.used or storage.added_new)


class LocaleMiddleware(HooksOnTheLoop, locale.LocaleMiddleware):
    pass


class CommonMiddleware(HooksOnTheLoop, common.CommonMiddleware):
    pass


class CsrfViewMiddleware(HooksOnTheLoop, csrf.CsrfViewMiddleware):
    """With the token in a cookie its hooks read and set cookies only; kept in the
    session, they would read the database."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        if settings.CSRF_USE_SESSIONS:
            raise ImproperlyConfigured(
                "gymnasia.middleware.CsrfViewMiddleware needs CSRF_USE_SESSIONS off"
            )
        super().__init__(get_response)


class AuthenticationMiddleware(HooksOnTheLoop, auth.AuthenticationMiddleware):
    """Sets a lazy ``request.user``; the session is read only when it is used."""


class XFrameOptionsMiddleware(HooksOnTheLoop, clickjacking.XFrameOptionsMiddleware):
    pass


class CSPMiddleware(HooksOnTheLoop, csp.CSPMiddleware):
    """django-csp's: a page's Content-Security-Policy, computed from settings."""


class GymTimeZoneMiddleware:
    """Times on the pages of a signed-in person are those of their gym: a class
    typed in admin as starting at 20:00 starts at 20:00 where the gym is, and the
    inbox and the conversation pages show when things happened there. The zone is
    ``time_zone_for_user``'s (UTC when the person's gyms are in several zones).

    A request without a session cookie (the widget and its API) is handed on as
    it came, on the event loop; one with a cookie reads the user and their gyms'
    zone in a thread, where the view's own ``request.user`` then finds the user
    already read."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(
        self, request: HttpRequest
    ) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if self.is_async:
            return self._acall(request)
        zone = self._zone(request) if self._signed_in_maybe(request) else None
        with timezone.override(zone):
            return cast(HttpResponseBase, self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        zone = None
        if self._signed_in_maybe(request):
            zone = await sync_to_async(self._zone)(request)
        with timezone.override(zone):
            return await cast(Awaitable[HttpResponseBase], self.get_response(request))

    @staticmethod
    def _signed_in_maybe(request: HttpRequest) -> bool:
        """Whether the request has a session, so maybe a signed-in person (read
        without the database)."""
        return settings.SESSION_COOKIE_NAME in request.COOKIES

    @staticmethod
    def _zone(request: HttpRequest) -> zoneinfo.ZoneInfo | None:
        return time_zone_for_user(user=request.user)


PROTECTIONS = {
    "security.W001": security.SecurityMiddleware,
    "security.W002": clickjacking.XFrameOptionsMiddleware,
    "security.W003": csrf.CsrfViewMiddleware,
}


def check_protections(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """Django's deploy checks W001 to W003 look for its own dotted paths in
    ``MIDDLEWARE``; they are silenced in settings and this check asks the same
    of the classes listed: each protection is there, as Django's class or one
    of its subclasses."""
    listed = [import_string(path) for path in settings.MIDDLEWARE]
    return [
        Warning(
            f"No middleware in MIDDLEWARE is {protection.__module__}."
            f"{protection.__name__} or a subclass of it (Django's {silenced}).",
            id="gymnasia.W001",
        )
        for silenced, protection in PROTECTIONS.items()
        if not any(
            isinstance(cls, type) and issubclass(cls, protection) for cls in listed
        )
    ]
