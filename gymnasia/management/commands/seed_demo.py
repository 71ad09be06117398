"""``manage.py seed_demo``: create or complete the demo gym and print its logins."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from gymnasia.demo import demo_gym_seed


class Command(BaseCommand):
    help = "Create or complete the demo gym. Running it again changes nothing."

    def handle(self, *args: Any, **options: Any) -> None:
        seed = demo_gym_seed()
        lines = [
            f"owner: {seed.owner[0]} {seed.owner[1]}",
            f"staff: {seed.staff[0]} {seed.staff[1]}",
        ]
        lines += [f"member: {member.external_id}" for member in seed.members]
        self.stdout.write("\n".join(lines))
