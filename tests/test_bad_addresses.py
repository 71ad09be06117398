"""Crafted addresses and settings that were server errors: each is a clear answer
now, at the request or at start-up."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cryptography.fernet import Fernet

from tests.test_embedded_run import ROOT, embedded_env


@pytest.mark.django_db
def test_a_widget_page_named_with_a_nul_character_is_not_found(client):
    """PostgreSQL refuses the NUL character: the lookup of the agent was a 500."""
    assert client.get("/widget/%00/").status_code == 404
    assert client.get("/widget/ag_%00x/").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "created_at__year=99999999999",
        "created_at__year=2026&created_at__month=99999999999999999999",
    ],
)
def test_an_admin_list_asked_for_a_year_past_any_date_is_a_bad_request(
    admin_client, query, row_counts
):
    """Django's date hierarchy turned the year into a date without catching its
    overflow: a 500, whatever list had a date hierarchy."""
    before = row_counts()
    for page in ("agents/conversation", "tools/toolcalllog"):
        response = admin_client.get(f"/admin/{page}/?{query}")
        assert response.status_code == 400, page
    assert row_counts() == before


def _check(tmp_path, keys: str) -> subprocess.CompletedProcess[str]:
    env = embedded_env(tmp_path)
    env["FIELD_ENCRYPTION_KEYS"] = keys
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_encryption_key_that_is_not_a_fernet_key_stops_the_check(tmp_path):
    """``notakey`` passed ``manage.py check`` and failed at the first secret."""
    good = Fernet.generate_key().decode()

    refused = _check(tmp_path, f"{good},notakey")
    passed = _check(tmp_path, good)

    assert refused.returncode != 0
    assert "tools.E002" in refused.stderr and "key 2" in refused.stderr
    assert passed.returncode == 0, passed.stderr


def _refused_starts(base: str, addresses: list[str]) -> list[int]:
    """Starts with an unknown agent, each claiming to come from an address."""
    import urllib.error
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # the answer itself is read
            return None

    opener = urllib.request.build_opener(NoRedirect)
    statuses = []
    for address in addresses:
        request = urllib.request.Request(
            f"{base}/api/v1/conversations",
            data=b'{"agent": "ag_nobody"}',
            headers={
                "Content-Type": "application/json",
                "X-Forwarded-For": address,
                # Outside DEBUG plain HTTP is sent to HTTPS; as from the TLS proxy.
                "X-Forwarded-Proto": "https",
            },
        )
        try:
            with opener.open(request, timeout=30) as response:
                statuses.append(response.status)
        except urllib.error.HTTPError as refused:
            statuses.append(refused.code)
    return statuses


PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "a-test-secret-key-" + "x" * 40,
    "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
}


@pytest.mark.parametrize(
    ("extra", "first", "last"),
    [
        ({}, 404, 404),
        (PRODUCTION, 301, 301),
        ({**PRODUCTION, "FORWARDED_ALLOW_IPS": "127.0.0.1"}, 404, 404),
    ],
    ids=["debug-trusts-loopback", "production-trusts-no-one", "production-listed"],
)
def test_only_a_listed_proxy_may_say_whose_request_it_is(tmp_path, extra, first, last):
    """uvicorn believed ``X-Forwarded-For`` from any client on loopback, so the
    per-address limits could be started over from the host by claiming another
    address. Outside ``DEBUG`` no proxy is believed unless ``FORWARDED_ALLOW_IPS``
    lists it; under ``DEBUG`` (``make run``), loopback is. A client no one listed
    is not believed that it came over HTTPS either: it is sent there (301)."""
    from tests.test_embedded_run import embedded_app_running

    with embedded_app_running(tmp_path, extra_env=extra, worker=False) as (
        base,
        _,
        _,
    ):
        statuses = _refused_starts(base, ["203.0.113.1"] * 90 + ["203.0.113.2"])

    assert statuses[:90] == [first] * 90
    assert statuses[-1] == last
