"""Each request's call row takes the state its pending action had: decided requests
stop blocking a repeat (R7), and an executed one's call holds its execution's
result, as a call executed since does on its own row."""

import datetime

from django.db import migrations

DECIDED = {"approved", "rejected", "expired", "superseded"}
EXECUTED = {"executing", "succeeded", "failed", "unknown"}
LEASE = datetime.timedelta(seconds=90)


def forward(apps, schema_editor):
    PendingAction = apps.get_model("approvals", "PendingAction")
    ToolCallLog = apps.get_model("tools", "ToolCallLog")
    actions = PendingAction.objects.exclude(status="pending").select_related(
        "execution"
    )
    for action in actions.iterator():
        call = ToolCallLog.objects.filter(pk=action.tool_call_id)
        if action.status in DECIDED:
            call.update(status=action.status)
        elif action.status in EXECUTED and action.execution is not None:
            run = action.execution
            call.update(
                status=run.status,
                verification=run.verification,
                result=run.result,
                lease_until=(action.started_at or run.created_at) + LEASE,
                finished_at=run.finished_at,
            )


class Migration(migrations.Migration):

    dependencies = [
        ("approvals", "0004_pendingaction_max_amount"),
        ("tools", "0006_call_state"),
    ]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
