"""Owners set what each model's tokens cost; staff read it."""

from django.db import migrations

from gymnasia.roles import roles_migration


class Migration(migrations.Migration):
    dependencies = [
        ("gymnasia", "0005_roles_notifications"),
        ("agents", "0009_step_usage_and_prices"),
    ]

    operations = [migrations.RunPython(roles_migration, migrations.RunPython.noop)]
