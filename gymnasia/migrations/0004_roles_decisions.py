"""Owners and staff read staff's decisions and each call's trail (the pending
actions and their events are gone)."""

from django.db import migrations

from gymnasia.roles import roles_migration


class Migration(migrations.Migration):
    dependencies = [
        ("gymnasia", "0003_roles_approval_events"),
        ("approvals", "0007_remove_pending_actions"),
        ("tools", "0007_requests"),
    ]

    operations = [migrations.RunPython(roles_migration, migrations.RunPython.noop)]
