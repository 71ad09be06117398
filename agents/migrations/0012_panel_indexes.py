"""Members' messages and model steps by time, for the owners' Panel; on
PostgreSQL it also holds what the Panel sums (an index-only scan: see
docs/performance.md). Other databases keep the plain partial index."""

from django.db import migrations, models

CONDITION = models.Q(role="member") | ~models.Q(model="")
PLAIN = models.Index(fields=["created_at"], condition=CONDITION, name="message_panel")
COVERING = models.Index(
    fields=["created_at"],
    condition=CONDITION,
    include=[
        "conversation",
        "role",
        "model",
        "input_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
        "output_tokens",
    ],
    name="message_panel",
)


def _swap(old: models.Index, new: models.Index):
    def swap(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        model = apps.get_model("agents", "Message")
        schema_editor.remove_index(model, old)
        schema_editor.add_index(model, new)

    return swap


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0011_budget_alerts"),
    ]

    operations = [
        migrations.AddIndex(model_name="message", index=PLAIN),
        migrations.RunPython(_swap(PLAIN, COVERING), _swap(COVERING, PLAIN)),
    ]
