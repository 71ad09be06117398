"""Changes to businesses and their staff roles."""

from __future__ import annotations

import zoneinfo

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils.text import slugify

from gymnasia.errors import Conflict, InvalidValue
from gymnasia.gyms.models import Business, Language, StaffRole
from gymnasia.roles import group_for_role


def staff_role_grant(*, business: Business, user: User, role: str) -> StaffRole:
    """Give a user a role at a business, with the admin access that role needs."""
    staff_role, created = StaffRole.objects.get_or_create(
        business=business, user=user, defaults={"role": role}
    )
    if not created and staff_role.role != role:
        staff_role.role = role
        staff_role.save(update_fields=["role"])
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    user.groups.add(group_for_role(role))
    return staff_role


def business_create(
    *, name: str, time_zone: str, language: str, owner_username: str, owner_email: str
) -> tuple[Business, User]:
    """A new gym and its owner, who signs in to the admin once a password is set
    (the owner's account has none yet). Refused whole, with nothing written,
    when a value is not one or the gym's or owner's name is taken."""
    name, owner_username = name.strip(), owner_username.strip()
    slug = slugify(name)[:80]
    if not slug:
        raise InvalidValue("The gym needs a name with letters or digits.")
    if time_zone not in zoneinfo.available_timezones():
        raise InvalidValue(f"Unknown time zone: {time_zone}.")
    if language not in Language.values:
        raise InvalidValue(f"The language is one of: {', '.join(Language.values)}.")
    if not owner_username:
        raise InvalidValue("The owner needs a username.")
    try:
        validate_email(owner_email)
    except ValidationError:
        raise InvalidValue(f"Not an e-mail address: {owner_email}.") from None
    with transaction.atomic():
        if Business.objects.filter(slug=slug).exists():
            raise Conflict(f"A gym named like {name!r} exists already.")
        if User.objects.filter(username=owner_username).exists():
            raise Conflict(f"The username {owner_username!r} is taken.")
        business = Business.objects.create(
            name=name, slug=slug, time_zone=time_zone, language=language
        )
        owner = User.objects.create_user(
            username=owner_username, email=owner_email, password=None
        )
        staff_role_grant(business=business, user=owner, role=StaffRole.Role.OWNER)
    return business, owner
