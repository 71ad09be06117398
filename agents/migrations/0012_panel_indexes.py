"""Members' messages and model steps by time, for the owners' Panel; on
PostgreSQL it also holds what the Panel sums (an index-only scan: see
docs/performance.md). Other databases keep the plain partial index."""

from django.db import migrations, models

from gymnasia.covering_indexes import covering_index

PLAIN = models.Index(
    fields=["created_at"],
    condition=models.Q(role="member") | ~models.Q(model=""),
    name="message_panel",
)


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0011_budget_alerts"),
    ]

    operations = [
        migrations.AddIndex(model_name="message", index=PLAIN),
        covering_index(
            "agents",
            "Message",
            PLAIN,
            [
                "conversation",
                "role",
                "model",
                "input_tokens",
                "cached_input_tokens",
                "cache_write_tokens",
                "output_tokens",
            ],
        ),
    ]
