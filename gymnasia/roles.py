"""The two roles people have at a gym, as Django groups with model permissions.

Owners configure (the gym's data, integrations, agents and their tools); staff read
(members, the diary, bookings, conversations and their verification log) and decide
approvals in the inbox. Admin pages also check the business of every object, so a
permission never reaches another gym's rows.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group

OWNERS_GROUP = "Gym owners"
STAFF_GROUP = "Gym staff"

ALL = ("view", "add", "change", "delete")
VIEW = ("view",)

#: model label → what owners may do with it.
OWNER_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "gyms.business": ("view", "change"),
    # The notification settings of each person (the rest stays read-only).
    "gyms.staffrole": ("view", "change"),
    "gyms.member": ALL,
    "nutrition.food": ALL,
    "nutrition.mealentry": VIEW,
    "classes.classtype": ALL,
    "classes.classsession": ALL,
    "classes.booking": VIEW,
    "memberships.membership": ALL,
    "memberships.membershipfreeze": VIEW,
    "tools.integration": ALL,
    "tools.agenttoolsetting": ALL,
    "tools.toolcalllog": VIEW,
    "tools.toolcallevent": VIEW,
    "tools.handoff": VIEW,
    "agents.agent": ALL,
    "agents.conversation": VIEW,
    "agents.message": VIEW,
    # What each model's tokens cost the gym (staff may read them).
    "agents.modelprice": ALL,
    # The agent's WhatsApp number and its secrets (written only).
    "agents.whatsappchannel": ALL,
    "approvals.decision": VIEW,
    "approvals.staffnotice": VIEW,
    "approvals.webhookendpoint": ALL,
    "approvals.webhookdelivery": VIEW,
}
#: Staff read what owners may read, and change nothing in admin.
STAFF_PERMISSIONS: dict[str, tuple[str, ...]] = {
    label: VIEW
    for label in OWNER_PERMISSIONS
    if label
    not in {
        "tools.integration",
        "agents.whatsappchannel",
        "approvals.webhookendpoint",
        "approvals.webhookdelivery",
    }
}


def _permissions(apps: Any, grants: dict[str, tuple[str, ...]]) -> list[Any]:
    permission_model = apps.get_model("auth", "Permission")
    wanted = []
    for label, actions in grants.items():
        app_label, model = label.split(".")
        wanted += [(app_label, f"{action}_{model}") for action in actions]
    found = permission_model.objects.filter(
        content_type__app_label__in={app for app, _ in wanted},
        codename__in={codename for _, codename in wanted},
    ).select_related("content_type")
    return [p for p in found if (p.content_type.app_label, p.codename) in set(wanted)]


def roles_sync(apps: Any) -> None:
    """Create or update both groups with exactly their permissions."""
    group_model = apps.get_model("auth", "Group")
    for name, grants in (
        (OWNERS_GROUP, OWNER_PERMISSIONS),
        (STAFF_GROUP, STAFF_PERMISSIONS),
    ):
        group, _ = group_model.objects.get_or_create(name=name)
        group.permissions.set(_permissions(apps, grants))


def group_for_role(role: str) -> Group:
    """The group of a role (created by the data migration; made again if missing)."""
    group, _ = Group.objects.get_or_create(
        name=OWNERS_GROUP if role == "owner" else STAFF_GROUP
    )
    return group


def roles_migration(apps: Any, schema_editor: Any) -> None:
    """The data migration step that (re)creates both groups.

    Permissions are normally created after all migrations have run; they are created
    here first so that the groups can be given them on a fresh database.
    """
    from django.apps import apps as global_apps
    from django.contrib.auth.management import create_permissions

    for app_config in global_apps.get_app_configs():
        create_permissions(app_config, apps=apps, verbosity=0)
    roles_sync(apps)
