"""Messages get an opaque public id (the conversation API's ``id``, ``after`` and
``before``): added empty and filled for every existing message; the next
migration makes it unique and required (apart, so that PostgreSQL alters the
table after the rows' updates are committed)."""

import uuid

from django.db import migrations, models

BATCH = 2000


def fill_public_ids(apps, schema_editor):
    message_model = apps.get_model("agents", "Message")
    while True:
        batch = list(
            message_model.objects.filter(public_id__isnull=True).only("pk")[:BATCH]
        )
        if not batch:
            return
        for message in batch:
            message.public_id = uuid.uuid4()
        message_model.objects.bulk_update(batch, ["public_id"])


class Migration(migrations.Migration):
    dependencies = [("agents", "0012_panel_indexes")]

    operations = [
        migrations.AddField(
            model_name="message",
            name="public_id",
            field=models.UUIDField(editable=False, null=True, verbose_name="public id"),
        ),
        migrations.RunPython(fill_public_ids, migrations.RunPython.noop),
    ]
