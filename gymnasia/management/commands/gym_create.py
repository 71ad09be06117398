"""``manage.py gym_create``: a production's first gym and its owner.

The owner's account is made without a password; the command prints how to set
one (``manage.py changepassword``), so no password goes through the shell's
history or the process list.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from gymnasia.errors import DomainError
from gymnasia.gyms.services import business_create


class Command(BaseCommand):
    help = "Create a gym and its owner, who then sets a password to sign in."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="The gym's name.")
        parser.add_argument(
            "--time-zone", required=True, help="Its time zone, e.g. Europe/Madrid."
        )
        parser.add_argument(
            "--language", required=True, help="Its default language: es or en."
        )
        parser.add_argument("--owner", required=True, help="The owner's username.")
        parser.add_argument("--email", required=True, help="The owner's e-mail.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            business, owner = business_create(
                name=options["name"],
                time_zone=options["time_zone"],
                language=options["language"],
                owner_username=options["owner"],
                owner_email=options["email"],
            )
        except DomainError as refused:
            raise CommandError(str(refused)) from None
        self.stdout.write(
            "\n".join(
                [
                    f"gym: {business.name} ({business.slug})",
                    f"owner: {owner.username} {owner.email}",
                    "Set the owner's password, then sign in at /admin/: "
                    f"python manage.py changepassword {owner.username}",
                ]
            )
        )
