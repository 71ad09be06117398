"""The project's own pages: the home page and the health check."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.shortcuts import render
from django.templatetags.static import static
from django.views.decorators.http import require_GET

from agents.limits import counting_shared


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """A landing page pointing to the places people use (the demo gym's site too,
    on the embedded default)."""
    return render(request, "home.html", {"demo_site": settings.DEMO_SITE})


@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """Answers 200 when the app can reach its database, and says where the API's
    rate limits count: ``shared`` (every web process together), or ``local`` (in
    this process, while the shared cache is away)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse(
        {"status": "ok", "rate_limits": "shared" if counting_shared() else "local"}
    )


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for ``/favicon.ico`` on every site, whatever a page's
    ``<link rel="icon">`` says: it leads to Gymnasia's icon (its static address
    is read at request time, after ``collectstatic`` named it)."""
    return HttpResponsePermanentRedirect(static("gymnasia/favicon.svg"))
