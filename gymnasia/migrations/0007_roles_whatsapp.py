"""Owners connect their agents' WhatsApp numbers."""

from django.db import migrations

from gymnasia.roles import roles_migration


class Migration(migrations.Migration):
    dependencies = [
        ("gymnasia", "0006_roles_model_prices"),
        ("agents", "0015_whatsapp_channel"),
    ]

    operations = [migrations.RunPython(roles_migration, migrations.RunPython.noop)]
