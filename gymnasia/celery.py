"""The Celery application, configured from Django settings.

Reliability from the start: a task is acknowledged only after it ran
(``task_acks_late``), a task whose worker died is handed back to the broker
(``task_reject_on_worker_lost``), a worker reserves one task at a time, and the
broker's visibility timeout is longer than any task may run.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gymnasia.settings")

app = Celery("gymnasia")


@app.on_configure.connect
def configure_from_settings(sender: Celery, **kwargs: Any) -> None:
    """Read the broker and the reliability settings from Django settings."""
    from django.conf import settings

    transport_options: dict[str, Any] = {
        "visibility_timeout": settings.CELERY_BROKER_VISIBILITY_TIMEOUT,
    }
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        folder = settings.CELERY_BROKER_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        transport_options.update(
            data_folder_in=str(folder),
            data_folder_out=str(folder),
            control_folder=str(folder / "control"),
            store_processed=False,
        )
    sender.conf.update(
        broker_url=settings.CELERY_BROKER_URL,
        broker_transport_options=transport_options,
        broker_connection_retry_on_startup=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_time_limit=settings.CELERY_TASK_TIME_LIMIT,
        task_soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        timezone=settings.TIME_ZONE,
        enable_utc=True,
        worker_hijack_root_logger=False,
        beat_schedule_filename=str(settings.DATA_DIR / "celerybeat-schedule"),
        beat_schedule={
            "sweep-pending-actions": {"task": "approvals.sweep", "schedule": 60.0},
            # Staff hear of a new request within about a second of it.
            "announce": {"task": "approvals.announce", "schedule": 1.0},
        },
    )


app.autodiscover_tasks()
