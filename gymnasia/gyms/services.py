"""Changes to businesses' staff roles."""

from __future__ import annotations

from django.contrib.auth.models import User

from gymnasia.gyms.models import Business, StaffRole
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
