"""The middleware under ASGI: Django's behaviour, with hooks kept on the event loop
unless they may use the database.

Django's ``AsyncClient`` runs the middleware chain in async mode, as uvicorn does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.sessions.models import Session
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpResponse
from django.test import AsyncClient

from gymnasia import middleware
from tests.factories import StaffRoleFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


def _call(client: AsyncClient, method: str, path: str, **kwargs: Any) -> Any:
    return async_to_sync(getattr(client, method))(path, **kwargs)


@pytest.fixture
def on_the_loop(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[bool]]:
    """For each watched hook, whether each call ran on the event loop (``True``)
    or in a thread handed the work by ``sync_to_async`` (``False``)."""
    seen: dict[str, list[bool]] = {}
    watched = [
        (middleware.SecurityMiddleware, "process_request"),
        (middleware.SessionMiddleware, "process_response"),
        (middleware.CsrfViewMiddleware, "process_request"),
        (middleware.MessageMiddleware, "process_response"),
    ]
    for cls, hook in watched:
        original = getattr(cls, hook)
        name = f"{cls.__name__}.{hook}"

        def spy(
            self: Any,
            *args: Any,
            _original: Callable[..., Any] = original,
            _name: str = name,
        ) -> Any:
            try:
                asyncio.get_running_loop()
                running = True
            except RuntimeError:
                running = False
            seen.setdefault(_name, []).append(running)
            return _original(self, *args)

        monkeypatch.setattr(cls, hook, spy)
    return seen


def test_hooks_that_only_compute_run_on_the_event_loop(on_the_loop):
    response = _call(AsyncClient(), "get", "/healthz")

    assert response.status_code == 200
    assert on_the_loop == {
        "SecurityMiddleware.process_request": [True],
        "SessionMiddleware.process_response": [True],
        "CsrfViewMiddleware.process_request": [True],
        "MessageMiddleware.process_response": [True],
    }
    # Django's headers are still set.
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["X-Frame-Options"] == "DENY"


def test_a_login_saves_its_session_from_a_thread(on_the_loop):
    role = StaffRoleFactory(role="staff")
    client = AsyncClient()

    response = _call(
        client,
        "post",
        "/admin/login/",
        data={"username": role.user.username, "password": PASSWORD},
    )

    assert response.status_code == 302
    assert on_the_loop["SessionMiddleware.process_response"] == [False]
    assert Session.objects.count() == 1
    assert _call(client, "get", "/inbox/").status_code == 200


def test_messages_reach_the_next_page():
    role = StaffRoleFactory(role="staff")
    client = AsyncClient()
    _call(
        client,
        "post",
        "/admin/login/",
        data={"username": role.user.username, "password": PASSWORD},
    )

    response = _call(client, "post", "/inbox/approve-selected")
    assert response.status_code == 302
    page = _call(client, "get", "/inbox/")

    # "0 requests approved.", in the staff member's language.
    notice = '<li class="success">0 '
    assert notice in page.content.decode()
    again = _call(client, "get", "/inbox/")
    assert notice not in again.content.decode()


def test_csrf_is_checked_on_the_event_loop():
    role = StaffRoleFactory(role="staff")
    client = AsyncClient(enforce_csrf_checks=True)
    credentials = {"username": role.user.username, "password": PASSWORD}

    refused = _call(client, "post", "/admin/login/", data=credentials)
    assert refused.status_code == 403
    assert Session.objects.count() == 0

    _call(client, "get", "/admin/login/")
    token = client.cookies["csrftoken"].value
    accepted = _call(
        client,
        "post",
        "/admin/login/",
        data={**credentials, "csrfmiddlewaretoken": token},
    )
    assert accepted.status_code == 302
    assert Session.objects.count() == 1


def test_csrf_middleware_refuses_tokens_kept_in_the_session(settings):
    settings.CSRF_USE_SESSIONS = True

    with pytest.raises(ImproperlyConfigured, match="CSRF_USE_SESSIONS"):
        middleware.CsrfViewMiddleware(lambda request: HttpResponse())


def test_the_deploy_check_finds_each_protection_by_its_class(settings):
    assert middleware.check_protections() == []

    settings.MIDDLEWARE = [
        path
        for path in settings.MIDDLEWARE
        if path != "gymnasia.middleware.CsrfViewMiddleware"
    ]
    warnings = middleware.check_protections()
    assert [w.id for w in warnings] == ["gymnasia.W001"]
    assert "django.middleware.csrf.CsrfViewMiddleware" in warnings[0].msg

    # Django's own class counts as well.
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE,
        "django.middleware.csrf.CsrfViewMiddleware",
    ]
    assert middleware.check_protections() == []
