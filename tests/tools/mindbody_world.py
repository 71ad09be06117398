"""A gym whose classes (and memberships) are served by its Mindbody site: the fake
Mindbody on loopback, connected as an owner connects it."""

from __future__ import annotations

import datetime
from typing import Any

from gymnasia.gyms.models import Business, Member
from gymnasia.gyms.selectors import business_today
from tools.models import Integration
from tools.services import mindbody_credentials_set


def connect_mindbody(
    business: Business,
    fake: Any,
    *,
    serves: tuple[str, ...] = ("classes", "memberships"),
    member_id_is_client_id: bool = True,
) -> Integration:
    """Connect the gym's Mindbody site (the fake) serving ``serves``."""
    integration = Integration.objects.create(
        business=business,
        kind=Integration.Kind.MINDBODY,
        status=Integration.Status.CONNECTED,
        config={
            "base_url": fake.base_url,
            "timeout_seconds": 1.0,
            "serves": list(serves),
            "member_id_is_client_id": member_id_is_client_id,
        },
    )
    mindbody_credentials_set(
        integration=integration,
        site_id=fake.site_id,
        api_key=fake.api_key,
        username=fake.staff_username,
        password=fake.staff_password,
    )
    return integration


def class_at(
    fake: Any, business: Business, *, days: int, hour: int, **kwargs: Any
) -> int:
    """A Mindbody class ``days`` from the gym's today at ``hour`` local time."""
    day = business_today(business=business) + datetime.timedelta(days=days)
    start = datetime.datetime.combine(day, datetime.time(hour), tzinfo=business.zone)
    return int(
        fake.add_class(
            start=start, end=start + datetime.timedelta(minutes=45), **kwargs
        )
    )


def client_of(fake: Any, member: Member, **kwargs: Any) -> str:
    """The member as a Mindbody client whose id is her id at the gym."""
    return str(
        fake.add_client(
            client_id=member.external_id,
            first_name="Ana",
            last_name="García",
            email=member.email or None,
            **kwargs,
        )
    )
