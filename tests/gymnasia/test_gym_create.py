"""``manage.py gym_create``: a production's first gym and its owner, who sets a
password and signs in to the admin as the gym's owner; bad values change nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.http import HttpRequest

from gymnasia.gyms.models import Business, StaffRole

pytestmark = pytest.mark.django_db

ARGS = [
    "--name",
    "Gimnasio Sol",
    "--time-zone",
    "Europe/Madrid",
    "--language",
    "es",
    "--owner",
    "ana",
    "--email",
    "ana@gimnasiosol.example",
]


def test_the_first_gym_and_its_owner_are_created(client):
    out = StringIO()

    call_command("gym_create", *ARGS, stdout=out)

    gym = Business.objects.get()
    assert (gym.name, gym.slug, gym.time_zone, gym.language) == (
        "Gimnasio Sol",
        "gimnasio-sol",
        "Europe/Madrid",
        "es",
    )
    owner = User.objects.get(username="ana")
    assert owner.email == "ana@gimnasiosol.example" and owner.is_staff
    assert not owner.has_usable_password()  # set by the owner, never printed
    assert StaffRole.objects.get(user=owner).role == "owner"
    assert out.getvalue().splitlines() == [
        "gym: Gimnasio Sol (gimnasio-sol)",
        "owner: ana ana@gimnasiosol.example",
        "Set the owner's password, then sign in at /admin/: "
        "python manage.py changepassword ana",
    ]
    owner.set_password("a long password for ana")  # what changepassword does
    owner.save()
    assert client.login(
        request=HttpRequest(), username="ana", password="a long password for ana"
    )
    page = client.get("/admin/gyms/business/").content.decode()
    assert "Gimnasio Sol" in page


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--time-zone", "Europe/Madird", "Unknown time zone"),
        ("--language", "fr", "The language is one of"),
        ("--email", "not-an-address", "Not an e-mail address"),
        ("--name", "   ", "needs a name"),
    ],
)
def test_a_bad_value_is_refused_and_changes_nothing(row_counts, option, value, said):
    args = list(ARGS)
    args[args.index(option) + 1] = value
    before, users = row_counts(), User.objects.count()

    with pytest.raises(CommandError, match=said):
        call_command("gym_create", *args, stdout=StringIO())

    assert row_counts() == before and User.objects.count() == users


def test_a_taken_owner_name_refuses_the_whole_gym(row_counts):
    User.objects.create_user(username="ana")
    before, users = row_counts(), User.objects.count()

    with pytest.raises(CommandError, match="taken"):
        call_command("gym_create", *ARGS, stdout=StringIO())

    assert row_counts() == before and User.objects.count() == users
