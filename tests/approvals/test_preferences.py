"""Each person sets how they are told on an inbox page, for their own roles only;
a bad value is refused with the form's words and changes nothing."""

from __future__ import annotations

import datetime

import pytest

from gymnasia.gyms.models import StaffRole
from tests.factories import StaffRoleFactory

pytestmark = pytest.mark.django_db


def form_data(role, **values):
    data = {
        "role": str(role.pk),
        f"role-{role.pk}-email_notifications": "on",
        f"role-{role.pk}-notify_requests": "on",
        f"role-{role.pk}-notify_handoffs": "on",
        f"role-{role.pk}-notify_reminders": "on",
        f"role-{role.pk}-quiet_from": "",
        f"role-{role.pk}-quiet_until": "",
        f"role-{role.pk}-language": "",
    }
    data.update({f"role-{role.pk}-{k}": v for k, v in values.items()})
    return {k: v for k, v in data.items() if v is not None}


def test_a_person_sets_their_quiet_hours_and_turns_off_reminders(client, world):
    role = StaffRoleFactory(business=world.business, role="staff")
    client.force_login(role.user)

    page = client.post(
        "/inbox/notifications",
        form_data(role, notify_reminders=None, quiet_from="22:00", quiet_until="07:00"),
    )

    assert page.status_code == 302
    role.refresh_from_db()
    assert (role.notify_reminders, role.quiet_from, role.quiet_until) == (
        False,
        datetime.time(22),
        datetime.time(7),
    )
    assert role.quiet_at(
        datetime.datetime(2027, 1, 5, 23, 0, tzinfo=world.business.zone)
    )
    assert not role.quiet_at(
        datetime.datetime(2027, 1, 5, 12, 0, tzinfo=world.business.zone)
    )


def test_half_a_quiet_hours_range_is_refused_and_changes_nothing(client, world):
    role = StaffRoleFactory(business=world.business, role="staff")
    client.force_login(role.user)

    page = client.post("/inbox/notifications", form_data(role, quiet_from="22:00"))

    assert page.status_code == 400
    assert "principio y el fin" in page.text
    role.refresh_from_db()
    assert role.quiet_from is None


def test_another_persons_settings_cannot_be_changed_from_this_page(client, world):
    mine = StaffRoleFactory(business=world.business, role="staff")
    theirs = StaffRoleFactory(business=world.business, role="staff")
    client.force_login(mine.user)

    page = client.post(
        "/inbox/notifications", form_data(theirs, email_notifications=None)
    )

    assert page.status_code == 400
    assert StaffRole.objects.get(pk=theirs.pk).email_notifications is True
    assert StaffRole.objects.get(pk=mine.pk).email_notifications is True


def test_the_page_lists_only_the_persons_own_gyms(client, world):
    role = StaffRoleFactory(business=world.business, role="staff")
    elsewhere = StaffRoleFactory(role="owner")
    client.force_login(role.user)

    page = client.get("/inbox/notifications")

    assert page.status_code == 200
    assert world.business.name in page.text
    assert elsewhere.business.name not in page.text


def test_an_owner_sets_how_their_staff_are_told_but_not_their_role(client, world):
    owner = StaffRoleFactory(business=world.business, role="owner")
    staff = StaffRoleFactory(business=world.business, role="staff")
    elsewhere = StaffRoleFactory(role="staff")
    client.force_login(owner.user)
    url = f"/admin/gyms/staffrole/{staff.pk}/change/"

    page = client.post(
        url,
        {
            "role": "owner",
            "notify_requests": "on",
            "language": "en",
            "quiet_from": "",
            "quiet_until": "",
        },
    )

    assert page.status_code == 302
    staff.refresh_from_db()
    assert (staff.role, staff.email_notifications, staff.language) == (
        "staff",
        False,
        "en",
    )
    assert (
        client.get(f"/admin/gyms/staffrole/{elsewhere.pk}/change/").status_code == 404
    )
