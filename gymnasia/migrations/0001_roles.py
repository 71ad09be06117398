"""Create the owners' and staff groups with their model permissions."""

from django.db import migrations

from gymnasia.roles import roles_migration


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

    operations = [migrations.RunPython(roles_migration, migrations.RunPython.noop)]
