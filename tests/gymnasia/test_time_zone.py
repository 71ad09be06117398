"""Staff pages speak the gym's time: a class typed in admin as starting at 20:00
starts at 20:00 where the gym is, and the inbox and the conversation pages say
when things happened there (they said it in UTC, the server's zone)."""

from __future__ import annotations

import datetime
import re
import zoneinfo

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient
from django.utils import timezone

from agents.conversations import conversation_start, message_add
from agents.models import Agent, Conversation, Message
from gymnasia import middleware
from gymnasia.classes.models import Booking, ClassSession
from gymnasia.gyms.selectors import time_zone_for_user
from tests.approvals.test_pending_actions import request_freeze
from tests.factories import (
    BusinessFactory,
    ClassSessionFactory,
    ClassTypeFactory,
    MemberFactory,
    StaffRoleFactory,
    UserFactory,
)
from tests.tools.world import build_world
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db

MADRID = zoneinfo.ZoneInfo("Europe/Madrid")
#: Christmas Eve, when Madrid is an hour ahead of UTC.
EVE = datetime.date(2026, 12, 24)


def test_an_owner_types_a_classs_start_in_the_gyms_time(client, row_counts):
    """20:00 typed in admin was stored as 20:00 UTC: 21:00 in Madrid, the time
    members were then told."""
    role = StaffRoleFactory(role="owner", business=BusinessFactory())
    kind = ClassTypeFactory(business=role.business)
    client.force_login(role.user)
    before = row_counts()

    response = client.post(
        "/admin/classes/classsession/add/",
        {
            "business": role.business.pk,
            "class_type": kind.pk,
            "starts_at_0": EVE.isoformat(),
            "starts_at_1": "20:00:00",
            "ends_at_0": EVE.isoformat(),
            "ends_at_1": "21:00:00",
            "capacity": "12",
        },
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    assert row_counts()["classes.ClassSession"] == before["classes.ClassSession"] + 1
    session = ClassSession.objects.get()
    assert session.starts_at == datetime.datetime(2026, 12, 24, 19, tzinfo=datetime.UTC)
    page = client.get(f"/admin/classes/classsession/{session.pk}/change/")
    assert 'name="starts_at_1" value="20:00:00"' in page.content.decode()


def test_rows_named_by_a_time_name_it_in_the_gyms_time(client):
    """A booking's class and a conversation are named by when they are; the
    names said it in UTC (the bookings list named a 07:30 class «06:30», the
    conversation's page its start an hour early)."""
    role = StaffRoleFactory(role="owner")
    session = ClassSessionFactory(
        business=role.business,
        starts_at=datetime.datetime(2026, 12, 24, 7, 30, tzinfo=MADRID),
    )
    Booking.objects.create(
        business=role.business,
        member=MemberFactory(business=role.business),
        session=session,
    )
    conversation = _conversation(role.business)
    Conversation.objects.filter(pk=conversation.pk).update(
        created_at=datetime.datetime(2026, 12, 24, 6, 30, tzinfo=datetime.UTC)
    )
    client.force_login(role.user)

    bookings = client.get("/admin/classes/booking/").content.decode()
    page = client.get(f"/admin/agents/conversation/{conversation.pk}/change/")

    assert f"{session.class_type.name} 2026-12-24 07:30" in bookings
    # The conversation is named by its start as people write it, at the gym's clock.
    assert re.search(
        r"· \w+ 24 (de )?(December|diciembre)( de)?( 2026)?, 07:30",
        page.content.decode(),
    )


def test_the_inbox_says_when_a_request_was_made_in_the_gyms_time(settings):
    """Read through the app's async path, as uvicorn serves it."""
    settings.LANGUAGE_CODE = "en"
    world = build_world()
    action = request_freeze(world)
    made = datetime.datetime(2026, 11, 30, 23, 14, tzinfo=datetime.UTC)
    ToolCallLog.objects.filter(pk=action.pk).update(created_at=made)
    client = AsyncClient()
    async_to_sync(client.aforce_login)(
        StaffRoleFactory(business=world.business, role="staff").user
    )

    page = async_to_sync(client.get)("/inbox/").content.decode()

    assert world.business.time_zone == "Europe/Madrid"
    assert "Tuesday 1 December, 00:14" in page
    assert "2026-11-30 23:14" not in page


def test_the_conversation_timeline_is_in_the_gyms_time(client):
    role = StaffRoleFactory(role="staff")
    agent_conversation = _conversation(role.business)
    message = message_add(
        conversation=agent_conversation, role=Message.Role.MEMBER, text="Hola"
    )
    Message.objects.filter(pk=message.pk).update(
        created_at=datetime.datetime(2026, 7, 1, 22, 30, 5, tzinfo=datetime.UTC)
    )
    client.force_login(role.user)

    page = client.get(
        f"/admin/agents/conversation/{agent_conversation.pk}/change/"
    ).content.decode()

    # summer: two hours ahead
    assert re.search(r"2 (July|de julio de) 2026, 00:30", page), page


def _conversation(business) -> Conversation:
    agent = Agent.objects.create(business=business, name="Asistente")
    return conversation_start(agent=agent, member=None)


def test_the_zone_is_that_of_the_persons_gyms_when_they_share_one():
    madrid = StaffRoleFactory(business=BusinessFactory(time_zone="Europe/Madrid"))
    user = madrid.user
    assert time_zone_for_user(user=user) == MADRID

    StaffRoleFactory(user=user, business=BusinessFactory(time_zone="Europe/Madrid"))
    assert time_zone_for_user(user=user) == MADRID

    # Gyms in two zones: no one gym's time is right for the other's rows.
    StaffRoleFactory(
        user=user, business=BusinessFactory(time_zone="America/Mexico_City")
    )
    assert time_zone_for_user(user=user) is None

    # No gym at all.
    assert time_zone_for_user(user=UserFactory()) is None


def test_a_superusers_zone_is_that_of_every_gym():
    BusinessFactory(time_zone="Europe/Lisbon")
    root = UserFactory(is_superuser=True, is_staff=True)
    assert time_zone_for_user(user=root) == zoneinfo.ZoneInfo("Europe/Lisbon")

    BusinessFactory(time_zone="Europe/Madrid")
    assert time_zone_for_user(user=root) is None


def test_the_widgets_requests_never_look_the_zone_up(monkeypatch):
    """No session cookie (the widget and its API): handed on without a thread or a
    query, in the server's zone."""
    looked: list[object] = []
    monkeypatch.setattr(
        middleware, "time_zone_for_user", lambda **kwargs: looked.append(kwargs)
    )

    response = async_to_sync(AsyncClient().get)("/healthz")

    assert response.status_code == 200
    assert looked == []
    assert timezone.get_current_timezone_name() == "UTC"
