"""What the tests of the offline demo model share: a member's conversation through
the API, the reply to a message, and classes on a day of their own."""

from __future__ import annotations

import datetime

from gymnasia.classes.models import Booking, ClassSession, ClassType
from gymnasia.gyms.selectors import business_today
from tests.agents.api_client import identity, send, start


def member_conversation(client, agent):
    return start(client, agent, identity_token=identity(agent, sub="socio-1001"))


def reply_to(response) -> str:
    return response.json()["messages"][-1]["text"]


#: A day past the demo's own schedule, with only the classes a test puts there.
LATER = 20


def classes_on_a_later_day(
    agent, *kinds: str, later: int = LATER, hours: tuple[int, ...] = ()
) -> tuple[str, list[ClassSession]]:
    """Sessions of ``kinds`` in that order, at ``hours`` or else hour by hour
    from 08:00, on a day of their own (``later`` days from today, past the demo's
    schedule)."""
    day = business_today(business=agent.business) + datetime.timedelta(days=later)
    sessions = []
    for hour, kind in zip(hours or range(8, 24), kinds, strict=False):
        starts = datetime.datetime.combine(
            day, datetime.time(hour), tzinfo=agent.business.zone
        )
        sessions.append(
            ClassSession.objects.create(
                business=agent.business,
                class_type=ClassType.objects.get(business=agent.business, name=kind),
                starts_at=starts,
                ends_at=starts + datetime.timedelta(minutes=45),
                capacity=10,
                instructor="Marta Gil",
                room="Sala 1",
            )
        )
    return day.isoformat(), sessions


def with_one_booking(client, agent):
    """A member's conversation in which she booked a yoga class of a later day."""
    day, _ = classes_on_a_later_day(agent, "Yoga")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la primera")
    assert Booking.objects.filter(status="confirmed").count() == 1
    return started


def cancelled_told(language: str = "es") -> str:
    """What the demo model says of the booking it cancelled, the only one
    cancelled, read from the database: its class and when it starts."""
    booking = Booking.objects.select_related("session__class_type").get(
        status=Booking.Status.CANCELLED
    )
    starts = booking.session.starts_at.astimezone(booking.session.business.zone)
    kind, when = booking.session.class_type.name, f"{starts:%Y-%m-%d %H:%M}"
    if language == "en":
        return f"Booking cancelled: {kind} on {when}."
    return f"Reserva cancelada: {kind} el {when}."
