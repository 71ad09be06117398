"""Whether a request came over HTTPS is believed from a listed proxy only, as
the client's address is: Django read ``X-Forwarded-Proto`` from any client, so a
client on plain HTTP could pass for HTTPS (no redirect to HTTPS, and pages that
hold secure cookies answered over plain HTTP)."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from tests.live_uvicorn import uvicorn_running

pytestmark = pytest.mark.django_db(transaction=True)
HTTPS = {"X-Forwarded-Proto": "https"}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _status(url: str, headers: dict[str, str]) -> tuple[int, str]:
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(url, headers=headers)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, ""
    except urllib.error.HTTPError as answer:
        return answer.code, answer.headers.get("Location", "")


@pytest.fixture
def https_only(settings):
    settings.SECURE_SSL_REDIRECT = True  # as outside DEBUG


def test_a_clients_own_https_claim_is_not_believed(client, https_only):
    response = client.get("/healthz", headers=HTTPS, REMOTE_ADDR="203.0.113.9")

    assert response.status_code == 301
    assert response["Location"].startswith("https://")


def test_a_listed_proxy_is_believed_and_no_one_else(https_only):
    with uvicorn_running(
        proxy_headers=True, forwarded_allow_ips=["127.0.0.1"]
    ) as listed:
        from_proxy = _status(f"{listed}/healthz", HTTPS)
        plain = _status(f"{listed}/healthz", {})
    with uvicorn_running(
        proxy_headers=True, forwarded_allow_ips=["192.0.2.1"]
    ) as unlisted:
        claimed = _status(f"{unlisted}/healthz", HTTPS)

    assert from_proxy == (200, "")
    assert plain[0] == 301 and plain[1].startswith("https://")
    assert claimed[0] == 301 and claimed[1].startswith("https://")
