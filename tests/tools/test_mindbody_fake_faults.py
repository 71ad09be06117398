"""The fake Mindbody server's fault modes, over real HTTP with httpx: errors
before any effect, answers lost after one, rate limits, slowness, expired
tokens and refused connections."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.fakes.mindbody_server import (
    MindbodyFake,
    mindbody_fake,  # noqa: F401  (the fixture, used by name below)
    mindbody_settings,  # noqa: F401
)
from tests.tools.mindbody_api import (
    ADD,
    Api,
    api_signed_in,
    code_of,
    fake_running,
    soon,
)

fake = pytest.fixture(fake_running)
api = pytest.fixture(api_signed_in)


def test_error_500_happens_before_any_effect(api: Api) -> None:
    api.fake.add_client(client_id="1")
    class_id = api.fake.add_class(start=soon())
    api.fake.fault("POST", ADD, "error_500")
    assert api.post(ADD, {"ClientId": "1", "ClassId": class_id}).status_code == 500
    assert api.fake.roster(class_id) == []
    assert api.post(ADD, {"ClientId": "1", "ClassId": class_id}).status_code == 200


def test_lost_after_books_then_closes_without_an_answer(api: Api) -> None:
    api.fake.add_client(client_id="1")
    class_id = api.fake.add_class(start=soon())
    api.fake.fault("POST", ADD, "lost_after")
    with pytest.raises(httpx.RemoteProtocolError):
        api.post(ADD, {"ClientId": "1", "ClassId": class_id})
    assert api.fake.roster(class_id) == ["1"]
    assert api.fake.count("POST", ADD) == 1
    assert api.fake.requests[-1]["status"] is None


def test_rate_and_daily_limits_answer_429_with_retry_after(api: Api) -> None:
    api.fake.fault("GET", "/class/classes", "rate_limited", seconds=7)
    limited = api.get("/class/classes")
    assert code_of(limited) == (429, "TooManyRequests")
    assert limited.headers["Retry-After"] == "7"
    api.fake.fault("GET", "/class/classes", "daily_limit", times=2)
    for _ in range(2):
        daily = api.get("/class/classes")
        assert code_of(daily) == (429, "DailyLimitReached")
        assert 0 < int(daily.headers["Retry-After"]) <= 86401
    assert api.get("/class/classes").status_code == 200


def test_slow_answers_late_and_token_expired_once(api: Api) -> None:
    api.fake.fault("GET", "/site/sites", "slow", seconds=0.4)
    began = time.monotonic()
    assert api.get("/site/sites").status_code == 200
    assert time.monotonic() - began >= 0.4
    with pytest.raises(httpx.ReadTimeout):
        api.fake.fault("GET", "/site/sites", "slow", seconds=1.0)
        api.http.get("/site/sites", timeout=0.2)

    api.fake.add_client(client_id="1")
    class_id = api.fake.add_class(start=soon())
    api.fake.fault("POST", ADD, "slow", seconds=1.0)
    with pytest.raises(httpx.ReadTimeout):
        api.http.post(ADD, json={"ClientId": "1", "ClassId": class_id}, timeout=0.2)
    assert api.fake.roster(class_id) == ["1"]  # made before the slow answer

    api.fake.fault("GET", "/client/clients", "token_expired")
    assert code_of(api.get("/client/clients")) == (401, "DeniedAccess")
    api.login()
    assert api.get("/client/clients").status_code == 200


def test_refused_connections_then_listening_again(api: Api) -> None:
    api.fake.fault("POST", ADD, "refused", seconds=30)
    with pytest.raises(httpx.ConnectError):
        api.post(ADD, {"ClientId": "1", "ClassId": 1})
    assert api.fake.count("POST", ADD) == 0
    api.fake.listen_again()
    assert api.get("/site/sites").status_code == 200


def test_unknown_paths_and_methods(api: Api) -> None:
    assert code_of(api.get("/class/Classes")) == (404, "NotFound")
    assert code_of(api.http.get(ADD)) == (405, "MethodNotAllowed")


def test_settings_fixture_lists_the_fake(mindbody_settings: MindbodyFake) -> None:  # noqa: F811
    from django.conf import settings

    assert settings.MINDBODY_API_BASES[-1] == mindbody_settings.base_url
    assert mindbody_settings.base_url.endswith("/public/v6")
