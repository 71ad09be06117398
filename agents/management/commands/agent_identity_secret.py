"""``manage.py agent_identity_secret PUBLIC_KEY [--new]``: the secret a gym's back
end signs its members' identity tokens with.

Secrets are never shown on a page (admin shows only their last characters), so the
operator hands it to the gym from the server's terminal. ``--new`` replaces it: tokens
signed with the old one are refused from then on.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import Agent
from agents.services import identity_secret_new
from tools.crypto import encrypt


class Command(BaseCommand):
    help = "Print an agent's identity secret (--new: replace it first)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("public_key")
        parser.add_argument("--new", action="store_true", help="Issue a new secret.")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = Agent.objects.filter(public_key=options["public_key"]).first()
        if agent is None:
            raise CommandError("No agent has that public key.")
        if options["new"]:
            agent.identity_secret_encrypted = encrypt(identity_secret_new())
            agent.save(update_fields=["identity_secret_encrypted"])
        self.stdout.write(agent.identity_secret)
