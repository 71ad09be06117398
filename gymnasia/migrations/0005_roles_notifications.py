"""Owners set how their staff are told and where the gym's own tools hear of
events (webhook endpoints); owners and staff read what was sent."""

from django.db import migrations

from gymnasia.roles import roles_migration


class Migration(migrations.Migration):
    dependencies = [
        ("gymnasia", "0004_roles_decisions"),
        ("gyms", "0002_notifications"),
        ("approvals", "0008_notifications"),
    ]

    operations = [migrations.RunPython(roles_migration, migrations.RunPython.noop)]
