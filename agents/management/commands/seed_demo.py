"""``manage.py seed_demo``: create or complete the demo gym and print its logins."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.demo import DEMO_SITE_ORIGIN, demo_seed
from agents.models import Agent
from gymnasia.errors import InvalidValue


class Command(BaseCommand):
    help = (
        "Create or complete the demo gym and its assistant. Running it again changes "
        "nothing; --provider and --model update the demo agent in place."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--provider", choices=Agent.Provider.values)
        parser.add_argument("--model")
        parser.add_argument(
            "--site-origin",
            default=DEMO_SITE_ORIGIN,
            help="The demo gym site's origin, allowed to embed the widget "
            f"(default {DEMO_SITE_ORIGIN}).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            seed = demo_seed(
                provider=options["provider"],
                model=options["model"],
                site_origin=options["site_origin"],
            )
        except InvalidValue as error:
            raise CommandError(str(error)) from None
        lines = [
            f"owner: {seed.gym.owner[0]} {seed.gym.owner[1]}",
            f"staff: {seed.gym.staff[0]} {seed.gym.staff[1]}",
            f"agent: {seed.agent.public_key}",
            f"identity secret: {seed.agent.identity_secret}",
        ]
        lines += [f"member: {member.external_id}" for member in seed.gym.members]
        self.stdout.write("\n".join(lines))
