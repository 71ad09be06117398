"""WhiteNoise's static files in a middleware that can run in async mode.

WhiteNoise's own middleware is sync-only; one sync middleware makes Django run the
whole request, async views included, through a small thread pool, so a slow provider
would hold a thread for every turn. This one answers static files as WhiteNoise does
and hands every other request on without leaving the event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase
from whitenoise.middleware import WhiteNoiseMiddleware


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
