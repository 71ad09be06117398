"""The pending actions and their events go (0006 moved what they held)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("approvals", "0006_decisions")]

    operations = [
        migrations.RemoveField(
            model_name="pendingactionevent",
            name="action",
        ),
        migrations.RemoveField(
            model_name="pendingactionevent",
            name="actor",
        ),
        migrations.DeleteModel(
            name="PendingAction",
        ),
        migrations.DeleteModel(
            name="PendingActionEvent",
        ),
    ]
