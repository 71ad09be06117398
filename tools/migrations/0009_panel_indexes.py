"""A gym's calls by time, named; on PostgreSQL it also holds the columns the
owners' Panel groups by (an index-only scan: see docs/performance.md). Other
databases keep the plain index: they take no included columns."""

from django.db import migrations, models

from gymnasia.covering_indexes import covering_index

PLAIN = models.Index(fields=["business", "created_at"], name="toolcalllog_business")


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
        covering_index(
            "tools",
            "ToolCallLog",
            PLAIN,
            ["tool_name", "status", "verification", "expires_at"],
        ),
    ]
