"""What the admin tests of agents share: the demo's owner signed in, and the
agent's page read."""

from __future__ import annotations

import re
from io import StringIO

from django.core.management import call_command
from django.http import HttpRequest

from agents.models import Agent
from tests.admin_forms import form_data


def owner_signed_in(client):
    """The demo's owner signed in (a module's ``demo`` fixture)."""
    out = StringIO()
    call_command("seed_demo", stdout=out)
    _, username, password = out.getvalue().splitlines()[0].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)
    return client


def panel_row(html: str, tool: str) -> str:
    match = re.search(rf'<tr data-tool="{tool}">(.*?)</tr>', html, re.S)
    assert match, tool
    return re.sub(r"<[^>]+>", "|", match.group(1))


def agent_page(client) -> tuple[str, str]:
    agent = Agent.objects.get()
    url = f"/admin/agents/agent/{agent.pk}/change/"
    return url, client.get(url).content.decode()


def post_changes(client, url, form_id, changes):
    data = form_data(client.get(url).content.decode(), form_id)
    data.update(changes)
    return client.post(url, data)
