"""Create the owners' and staff groups with their model permissions."""

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import migrations

from gymnasia.roles import roles_sync


def create_roles(apps, schema_editor):
    # Permissions are normally created after all migrations; create them now.
    for app_config in global_apps.get_app_configs():
        create_permissions(app_config, apps=apps, verbosity=0)
    roles_sync(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("gyms", "0001_initial"),
        ("nutrition", "0001_initial"),
        ("classes", "0001_initial"),
        ("memberships", "0001_initial"),
        ("tools", "0002_agenttoolsetting_integration"),
        ("agents", "0001_initial"),
        ("approvals", "0002_initial"),
    ]

    operations = [migrations.RunPython(create_roles, migrations.RunPython.noop)]
