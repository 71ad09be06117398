"""A gym's calls by time, named; on PostgreSQL it also holds the columns the
owners' Panel groups by (an index-only scan: see docs/performance.md). Other
databases keep the plain index: they take no included columns."""

from django.db import migrations, models

PLAIN = models.Index(fields=["business", "created_at"], name="toolcalllog_business")
COVERING = models.Index(
    fields=["business", "created_at"],
    include=["tool_name", "status", "verification", "expires_at"],
    name="toolcalllog_business",
)


def _swap(old: models.Index, new: models.Index):
    def swap(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        model = apps.get_model("tools", "ToolCallLog")
        schema_editor.remove_index(model, old)
        schema_editor.add_index(model, new)

    return swap


class Migration(migrations.Migration):
    dependencies = [
        ("tools", "0008_handoff_budget"),
    ]

    operations = [
        migrations.RenameIndex(
            model_name="toolcalllog",
            new_name="toolcalllog_business",
            old_name="tools_toolc_busines_19b6a8_idx",
        ),
        migrations.RunPython(_swap(PLAIN, COVERING), _swap(COVERING, PLAIN)),
    ]
