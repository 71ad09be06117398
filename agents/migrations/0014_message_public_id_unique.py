"""Every message has its public id now (0013): it is unique and required."""

import uuid

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("agents", "0013_message_public_id")]

    operations = [
        migrations.AlterField(
            model_name="message",
            name="public_id",
            field=models.UUIDField(
                default=uuid.uuid4,
                editable=False,
                unique=True,
                verbose_name="public id",
            ),
        ),
    ]
