"""What the benchmarks through a real Celery worker share: Django set up on the
given PostgreSQL and Redis, and a worker subprocess on them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def django_on(database_url: str, redis_url: str) -> dict[str, str]:
    """Set Django up on the database and broker, migrated; the environment a
    worker of the same setup needs."""
    env = {
        "DEBUG": "1",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": redis_url,
        "DJANGO_SETTINGS_MODULE": "gymnasia.settings",
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from gymnasia.celery import app

    call_command("migrate", verbosity=0)
    app.control.purge()
    return env


def worker_started(
    log: Path, env: dict[str, str], *, beat: bool = False
) -> subprocess.Popen[bytes]:
    """A Celery worker (solo pool; with beat's schedule when ``beat``)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "gymnasia",
            "worker",
            *(["--beat"] if beat else []),
            "--pool=solo",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
