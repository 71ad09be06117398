"""The app as ``make run`` starts it (uvicorn): opening a decision link, a
refused one too, leaves no token in the server's log, access log included."""

from __future__ import annotations

import http.cookiejar
import urllib.error
import urllib.request

from django.core import signing

from approvals.links import SALT
from tests.test_embedded_run import embedded_app_running


def _opened(url: str) -> tuple[int, str]:
    """Follow the link as a browser does (cookies kept): the last status and
    address."""
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    try:
        with opener.open(url, timeout=30) as response:
            return response.status, response.url
    except urllib.error.HTTPError as refused:
        return refused.code, refused.url


def test_the_servers_log_holds_no_links_token(tmp_path):
    """uvicorn's access log and Django's ``Not Found: /inbox/link/<token>``
    warning held the link's token."""
    signed = signing.dumps(
        {"n": "00000000-0000-0000-0000-000000000000", "u": 1, "a": "approve"},
        salt=SALT,
        compress=True,
    )
    tokens = [signed, "not-a-token-" + "x" * 30]
    with embedded_app_running(tmp_path, worker=False) as (base, _, log):
        answers = [_opened(f"{base}/inbox/link/{token}") for token in tokens]
        text = log.read_text()

    for status, address in answers:
        assert status == 404 and "/inbox/link/page/" in address
    assert "GET /inbox/link/" in text  # the access log is on, and read
    for token in tokens:
        assert token not in text
