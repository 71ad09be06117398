"""Benchmark: the Mindbody API calls each tool call makes (Mindbody bills calls
beyond a daily quota), through the real dispatcher and client against the fake
Mindbody on loopback.

Run: ``DEBUG=1 .venv/bin/python tests/bench/bench_mindbody_calls.py`` (SQLite in a
temporary file). Prints one line per case: the API calls it made, and how many of
them issued a user token. Targets: a page of classes 1 call, a verified booking
(with its read-back) at most 3; a token is issued once and reused.
"""

from __future__ import annotations

import datetime
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.machine import speed_line  # noqa: E402


def _configure(database: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gymnasia.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _cases(fake: Any) -> list[tuple[str, Any]]:
    """Each case: its name, and the calls it makes (run in order, one world)."""
    from django.test.utils import override_settings

    from gymnasia.gyms.selectors import business_today
    from tests.factories import MembershipFactory
    from tests.tools.mindbody_world import class_at, client_of, connect_mindbody
    from tools.dispatcher import CallContext, dispatch_tool_call
    from tools.registry import published_registry
    from tools.selection import ToolPolicy
    from tools.types import ToolCall

    override_settings(MINDBODY_API_BASES=[fake.base_url]).enable()
    member = MembershipFactory().member
    member.email = "bench@example.com"
    member.save()
    business = member.business
    connect_mindbody(business, fake)
    client_of(fake, member)
    sessions = [class_at(fake, business, days=1, hour=h, name="Spin") for h in (9, 10)]
    today = business_today(business=business)
    offered = {t.name: ToolPolicy(mode="auto") for t in published_registry()}
    numbers = iter(range(1, 1000))

    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        context = CallContext(
            business=business,
            member=member,
            conversation_key="bench",
            offered=offered,
        )
        result = dispatch_tool_call(
            ToolCall(id=f"call-{next(numbers)}", name=name, arguments=arguments),
            context,
        )
        assert result.status in ("ok", "no_results"), result.payload
        return dict(result.payload)

    days = {
        "date_from": today.isoformat(),
        "date_to": (today + datetime.timedelta(days=6)).isoformat(),
    }
    booked: dict[str, Any] = {}

    def book() -> None:
        booked.update(call("book_class", {"session_id": sessions[0]})["booking"])

    def lost() -> None:
        fake.fault("POST", "/class/addclienttoclass", "lost_after")
        call("book_class", {"session_id": sessions[1]})

    return [
        (
            "list_classes, first call of the day (a page of classes)",
            lambda: call("list_classes", days),
        ),
        ("list_classes again (token reused)", lambda: call("list_classes", days)),
        ("book_class, verified", book),
        ("book_class whose answer was lost, read back and verified", lost),
        ("list_my_bookings", lambda: call("list_my_bookings", {})),
        (
            "cancel_booking, verified",
            lambda: call("cancel_booking", {"booking_id": booked["booking_id"]}),
        ),
        (
            "get_membership (no contract: contracts, then memberships)",
            lambda: call("get_membership", {}),
        ),
    ]


def main() -> None:
    print(speed_line())
    with tempfile.TemporaryDirectory() as folder:
        _configure(Path(folder) / "bench.sqlite3")
        from tests.fakes.mindbody_server import running_mindbody

        with running_mindbody() as fake:
            for name, run in _cases(fake):
                before = len(fake.requests)
                run()
                made = fake.requests[before:]
                tokens = sum(r["path"] == "/usertoken/issue" for r in made)
                paths = ", ".join(r["path"] for r in made)
                print(f"{name}: {len(made)} API calls ({tokens} token issued): {paths}")


if __name__ == "__main__":
    main()
