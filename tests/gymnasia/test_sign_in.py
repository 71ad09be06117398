"""Sign-in throttling (django-axes), through the admin's sign-in page, which is
also the inbox's: after 5 wrong passwords for one user name from one address,
even the right one is refused for 15 minutes, in words; the gym's owner (or a
superuser) lifts it in admin, and nobody else sees it."""

from __future__ import annotations

import datetime

import pytest
import time_machine
from axes.models import AccessAttempt
from django.test import Client

from tests.factories import BusinessFactory, StaffRoleFactory, UserFactory

pytestmark = pytest.mark.django_db
LOGIN = "/admin/login/"
PASSWORD = "correct horse battery"
ATTEMPTS = "/admin/axes/accessattempt/"


@pytest.fixture
def gym():
    return BusinessFactory(name="Gimnasio Alfa")


@pytest.fixture
def staff(gym):
    return StaffRoleFactory(
        business=gym, role="staff", user=UserFactory(username="ana")
    )


@pytest.fixture
def owner(gym):
    return StaffRoleFactory(
        business=gym, role="owner", user=UserFactory(username="eva")
    )


def sign_in(client: Client, username: str, password: str, address="127.0.0.1"):
    return client.post(
        LOGIN,
        {"username": username, "password": password, "next": "/inbox/"},
        REMOTE_ADDR=address,
    )


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def locked_out(client: Client, staff) -> None:
    """Five wrong passwords: the fifth is answered with the lock-out."""
    for _ in range(4):
        assert sign_in(client, staff.user.username, "wrong").status_code == 200
    assert sign_in(client, staff.user.username, "wrong").status_code == 429


def test_the_right_password_after_five_wrong_ones_is_refused_in_words(client, staff):
    """``/admin/login/`` took 40 wrong passwords, then the right one."""
    locked_out(client, staff)

    refused = sign_in(client, "ana", PASSWORD)

    assert refused.status_code == 429
    assert not signed_in(client)
    assert "bloqueado durante 15 minutos" in refused.text
    assert "5 veces seguidas" in refused.text
    assert "propietario" in refused.text


def test_the_lock_out_page_speaks_english_too(client, staff):
    locked_out(client, staff)

    refused = client.post(
        LOGIN,
        {"username": "ana", "password": PASSWORD},
        HTTP_ACCEPT_LANGUAGE="en",
    )

    assert refused.status_code == 429
    assert "locked for 15 minutes" in refused.text


def test_four_wrong_passwords_then_the_right_one_signs_in(client, staff):
    for _ in range(4):
        sign_in(client, "ana", "wrong")

    assert sign_in(client, "ana", PASSWORD).status_code == 302
    assert signed_in(client)


def test_the_lock_out_is_of_the_user_from_that_address(client, staff):
    locked_out(client, staff)

    elsewhere = Client()
    assert (
        sign_in(elsewhere, "ana", PASSWORD, address="198.51.100.7").status_code == 302
    )
    assert signed_in(elsewhere)


def test_the_lock_out_ends_after_fifteen_minutes(client, staff):
    locked_out(client, staff)

    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=16)
    with time_machine.travel(later):
        assert sign_in(client, "ana", PASSWORD).status_code == 302


def test_the_gyms_owner_lifts_the_lock_out_in_admin(client, staff, owner):
    locked_out(client, staff)
    admin = Client()
    admin.force_login(owner.user)

    listed = admin.get(ATTEMPTS)
    attempt = AccessAttempt.objects.get(username="ana")
    lifted = admin.post(
        ATTEMPTS, {"action": "lift", "_selected_action": [attempt.pk]}, follow=True
    )

    assert listed.status_code == 200 and "ana" in listed.text
    assert "levantado" in lifted.text
    assert not AccessAttempt.objects.exists()
    assert sign_in(client, "ana", PASSWORD).status_code == 302


def test_another_gyms_owner_sees_nothing_of_it(client, staff):
    locked_out(client, staff)
    other = StaffRoleFactory(business=BusinessFactory(name="Gimnasio Omega"))
    admin = Client()
    admin.force_login(other.user)
    attempt = AccessAttempt.objects.get(username="ana")

    listed = admin.get(ATTEMPTS)
    admin.post(ATTEMPTS, {"action": "lift", "_selected_action": [attempt.pk]})

    assert listed.status_code == 200 and ">ana<" not in listed.text
    assert admin.get(f"{ATTEMPTS}{attempt.pk}/change/").status_code == 302
    assert AccessAttempt.objects.filter(pk=attempt.pk).exists()


def test_staff_do_not_see_lock_outs(client, staff):
    locked_out(client, staff)
    colleague = StaffRoleFactory(business=staff.business, role="staff")
    admin = Client()
    admin.force_login(colleague.user)

    assert admin.get(ATTEMPTS).status_code == 403
    assert AccessAttempt.objects.exists()


def test_a_superuser_lifts_any_lock_out(client, staff):
    locked_out(client, staff)
    root = UserFactory(is_superuser=True)
    admin = Client()
    admin.force_login(root)
    attempt = AccessAttempt.objects.get(username="ana")

    admin.post(ATTEMPTS, {"action": "lift", "_selected_action": [attempt.pk]})

    assert not AccessAttempt.objects.exists()
