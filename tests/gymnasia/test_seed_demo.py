"""The demo gym seed."""

from __future__ import annotations

import datetime
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.http import HttpRequest
from django.utils import timezone

from agents.demo import demo_agent
from gymnasia.classes.models import ClassSession
from gymnasia.demo import DEMO_SLUG, MEMBERS
from gymnasia.gyms.models import Business
from gymnasia.gyms.selectors import business_today
from gymnasia.memberships.models import Membership, MembershipFreeze
from gymnasia.memberships.services import membership_freeze
from gymnasia.nutrition.models import Food
from gymnasia.nutrition.selectors import foods_search
from tools.models import AgentToolSetting, Integration

pytestmark = pytest.mark.django_db


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def test_seed_demo_prints_the_logins_in_the_public_format():
    lines = seed().splitlines()
    assert lines[0].startswith("owner: demo-owner ")
    assert lines[1].startswith("staff: demo-staff ")
    assert lines[2].startswith("agent: ag_")
    assert lines[3].startswith("identity secret: ")
    assert len(lines[3].removeprefix("identity secret: ")) >= 43  # 32 random bytes
    assert lines[4:] == [f"member: {external_id}" for external_id, *_ in MEMBERS]
    for line in lines:
        assert len(line.split(": ")[1].split(" ")) in (1, 2)


def test_seed_demo_twice_creates_nothing_new(row_counts):
    first_output = seed()
    after_first = row_counts()
    memberships = list(Membership.objects.values())
    second_output = seed()
    assert row_counts() == after_first
    assert list(Membership.objects.values()) == memberships
    assert second_output == first_output


def test_seed_demo_catalog_distinguishes_rice_varieties():
    seed()
    business = Business.objects.get(slug=DEMO_SLUG)
    assert Food.objects.filter(business=business).count() >= 40
    rices = foods_search(business=business, query="arroz")
    by_name = {food.name: food.carbohydrates_per_100g for food in rices}
    assert by_name["Arroz blanco (cocido)"] == Decimal("28.0")
    assert "Arroz integral (cocido)" in by_name
    assert len(by_name) >= 2


def test_seed_demo_schedules_two_weeks_of_classes():
    seed()
    business = Business.objects.get(slug=DEMO_SLUG)
    today = business_today(business=business)
    days = {
        timezone.localtime(s.starts_at, business.zone).date()
        for s in ClassSession.objects.filter(business=business)
    }
    weekdays_ahead = {
        today + datetime.timedelta(days=n)
        for n in range(14)
        if (today + datetime.timedelta(days=n)).weekday() < 6
    }
    assert weekdays_ahead <= days


def test_seed_demo_members_have_a_long_active_membership_without_freeze():
    seed()
    business = Business.objects.get(slug=DEMO_SLUG)
    today = business_today(business=business)
    member = business.members.get(external_id=MEMBERS[0][0])
    membership_freeze(
        business=business,
        member=member,
        start=today + datetime.timedelta(days=3),
        end=today + datetime.timedelta(days=9),
    )
    seed()
    for member in business.members.all():
        membership = Membership.objects.get(member=member)
        assert membership.status == "active"
        assert membership.ends_on >= today + datetime.timedelta(days=120)
        assert not MembershipFreeze.objects.filter(membership=membership).exists()


def test_seed_demo_owner_signs_in_to_admin_and_sees_the_catalog(client):
    owner_line = seed().splitlines()[0]
    _, username, password = owner_line.split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)
    page = client.get("/admin/nutrition/food/", {"q": "arroz"})
    assert page.status_code == 200
    assert "Arroz blanco (cocido)" in page.content.decode()


def test_seed_demo_logins_work_again_after_their_accounts_were_deactivated(client):
    """The printed logins did not work: a deactivated demo account stayed so."""
    seed()
    get_user_model().objects.filter(username__startswith="demo-").update(
        is_active=False
    )

    lines = seed().splitlines()[:2]

    for line in lines:
        _, username, password = line.split(" ")
        assert client.login(
            request=HttpRequest(), username=username, password=password
        ), line
        client.logout()


def test_seed_demo_again_keeps_what_the_owner_changed(row_counts):
    """An owner made ``freeze_membership`` automatic, switched off
    ``handoff_to_staff`` and disconnected the diary; seeding again (every
    ``make run``) changes none of it, nor anything else."""
    seed()
    agent = demo_agent()
    settings = AgentToolSetting.objects.filter(agent=agent)
    settings.filter(tool_name="freeze_membership").update(
        mode=AgentToolSetting.Mode.AUTOMATIC
    )
    settings.filter(tool_name="handoff_to_staff").update(enabled=False)
    Integration.objects.filter(business=agent.business, kind="nutrition").update(
        status=Integration.Status.DISCONNECTED
    )
    before = row_counts()
    chosen = list(AgentToolSetting.objects.values()), list(Integration.objects.values())

    seed()

    assert row_counts() == before
    assert (
        list(AgentToolSetting.objects.values()),
        list(Integration.objects.values()),
    ) == chosen


def test_seed_demo_gives_the_gym_contact_details_once():
    """The demo gym is created with contact details; seeding again keeps what
    the owner wrote there, even nothing."""
    seed()
    business = Business.objects.get(slug=DEMO_SLUG)
    assert business.contact_details.startswith("Recepción")

    Business.objects.filter(pk=business.pk).update(contact_details="")
    seed()

    assert Business.objects.get(pk=business.pk).contact_details == ""
