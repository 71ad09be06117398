"""Owners and staff read conversations and their messages."""

from django.db import migrations

from gymnasia.roles import roles_migration


class Migration(migrations.Migration):
    dependencies = [
        ("gymnasia", "0001_roles"),
        ("agents", "0002_conversation_message_and_more"),
    ]

    operations = [migrations.RunPython(roles_migration, migrations.RunPython.noop)]
