"""Owners and staff read the trail of each pending action."""

from django.db import migrations

from gymnasia.roles import roles_migration


class Migration(migrations.Migration):
    dependencies = [
        ("gymnasia", "0002_roles_conversations"),
        ("approvals", "0003_pendingactionevent_pendingaction_decided_at_and_more"),
    ]

    operations = [migrations.RunPython(roles_migration, migrations.RunPython.noop)]
