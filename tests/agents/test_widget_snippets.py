"""The server-side snippets of docs/widget.md, run as a gym's back end would run
them: the API accepts the identity tokens they sign."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from agents.models import Agent

pytestmark = pytest.mark.django_db

WIDGET_DOC = Path(__file__).resolve().parents[2] / "docs" / "widget.md"


def snippet(label: str, language: str) -> str:
    """The code block that follows a label line of the widget's page."""
    text = WIDGET_DOC.read_text()
    match = re.search(
        rf"^{re.escape(label)}\n\n```{language}\n(.*?)\n```", text, re.S | re.M
    )
    assert match, f"no {language} block after {label!r} in docs/widget.md"
    return match.group(1)


@pytest.fixture
def agent(monkeypatch):
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    monkeypatch.setenv("GYMNASIA_AGENT_KEY", agent.public_key)
    monkeypatch.setenv("GYMNASIA_IDENTITY_SECRET", agent.identity_secret)
    return agent


def start_as(client, agent, token):
    return client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key, "identity_token": token},
        content_type="application/json",
    )


def test_the_python_snippet_signs_a_token_the_api_accepts(client, agent):
    namespace: dict = {}
    exec(snippet("Python (PyJWT):", "python"), namespace)  # noqa: S102

    token = namespace["gymnasia_identity_token"]("socio-7001", "Ana", "ana@example.com")
    response = start_as(client, agent, token)

    assert response.status_code == 201
    assert response.json()["member"] == "socio-7001"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_the_node_snippet_signs_a_token_the_api_accepts(client, agent):
    program = (
        snippet("Node.js (plain JavaScript, no library):", "js")
        + '\nprocess.stdout.write(gymnasiaIdentityToken("socio-7002", "Íñigo"));\n'
    )
    token = subprocess.run(
        ["node", "-e", program],
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    response = start_as(client, agent, token)

    assert response.status_code == 201
    assert response.json()["member"] == "socio-7002"


def test_a_token_signed_with_another_secret_is_refused(client, agent, monkeypatch):
    monkeypatch.setenv("GYMNASIA_IDENTITY_SECRET", "x" * 43)
    namespace: dict = {}
    exec(snippet("Python (PyJWT):", "python"), namespace)  # noqa: S102

    response = start_as(client, agent, namespace["gymnasia_identity_token"]("s-1"))

    assert response.status_code == 401
