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
