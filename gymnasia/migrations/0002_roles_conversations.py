"""Owners and staff read conversations and their messages."""

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import migrations

from gymnasia.roles import roles_sync


def sync_roles(apps, schema_editor):
    for app_config in global_apps.get_app_configs():
        create_permissions(app_config, apps=apps, verbosity=0)
    roles_sync(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("gymnasia", "0001_roles"),
        ("agents", "0002_conversation_message_and_more"),
    ]

    operations = [migrations.RunPython(sync_roles, migrations.RunPython.noop)]
