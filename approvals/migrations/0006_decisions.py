"""Requests wait on their calls; approvals keeps only staff's decisions.

Each pending action's expiry and the owner's limit move onto its call, each
decided one becomes a ``Decision`` (a correction with the request it made and
what it changed; an executed one as already told), and the pending actions and
their events go: the calls' own events are the trail."""

import datetime

import django.db.models.deletion
import django.utils.timezone
import uuid
from django.conf import settings
from django.db import migrations, models

EXECUTED = {"succeeded", "failed", "unknown"}
KINDS = {"approved", "rejected", "superseded", "expired"}


def forward(apps, schema_editor):
    PendingAction = apps.get_model("approvals", "PendingAction")
    PendingActionEvent = apps.get_model("approvals", "PendingActionEvent")
    ToolCallLog = apps.get_model("tools", "ToolCallLog")
    Decision = apps.get_model("approvals", "Decision")
    for action in PendingAction.objects.iterator():
        ToolCallLog.objects.filter(pk=action.tool_call_id).update(
            expires_at=action.expires_at
            or action.requested_at + datetime.timedelta(hours=24),
            max_amount=action.max_amount,
        )
        if action.status == "pending":
            continue
        corrected_to, difference = None, {}
        if action.status == "superseded":
            event = PendingActionEvent.objects.filter(
                action=action, kind="superseded"
            ).first()
            new = (
                event
                and PendingAction.objects.filter(pk=event.parameters.get("by")).first()
            )
            if new:
                corrected_to = new.tool_call_id
                difference = event.parameters.get("difference", {})
        Decision.objects.create(
            business_id=action.business_id,
            call_id=action.tool_call_id,
            kind=action.status if action.status in KINDS else "approved",
            decided_by_id=action.decided_by_id,
            decided_at=action.decided_at or action.requested_at,
            reason=action.decision_reason,
            corrected_to_id=corrected_to,
            difference=difference,
            told_at=(action.finished_at or action.decided_at)
            if action.status in EXECUTED
            else None,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0005_call_state"),
        ("gyms", "0001_initial"),
        ("tools", "0007_requests"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Decision",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("approved", "Approved"),
                            ("rejected", "Rejected"),
                            ("superseded", "Corrected"),
                            ("expired", "Expired"),
                        ],
                        max_length=12,
                        verbose_name="decision",
                    ),
                ),
                (
                    "decided_at",
                    models.DateTimeField(
                        default=django.utils.timezone.now, verbose_name="decided at"
                    ),
                ),
                ("reason", models.TextField(blank=True, verbose_name="reason")),
                (
                    "difference",
                    models.JSONField(blank=True, default=dict, verbose_name="changes"),
                ),
                (
                    "told_at",
                    models.DateTimeField(
                        blank=True, null=True, verbose_name="outcome told at"
                    ),
                ),
                (
                    "business",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="gyms.business",
                        verbose_name="business",
                    ),
                ),
                (
                    "call",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="decision",
                        to="tools.toolcalllog",
                        verbose_name="request",
                    ),
                ),
                (
                    "corrected_to",
                    models.OneToOneField(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="corrects",
                        to="tools.toolcalllog",
                        verbose_name="corrected into",
                    ),
                ),
                (
                    "decided_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="decided by",
                    ),
                ),
            ],
            options={
                "verbose_name": "decision",
                "verbose_name_plural": "decisions",
                "ordering": ["-decided_at"],
            },
        ),
        migrations.AddIndex(
            model_name="decision",
            index=models.Index(
                condition=models.Q(("kind", "approved"), ("told_at__isnull", True)),
                fields=["decided_at"],
                name="decision_untold",
            ),
        ),
        migrations.RunPython(forward, migrations.RunPython.noop),
    ]
