"""Settings from the environment, production checks and the Celery configuration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if key
        not in {
            "DEBUG",
            "SECRET_KEY",
            "FIELD_ENCRYPTION_KEYS",
            "ALLOWED_HOSTS",
            "DATABASE_URL",
        }
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k" * 20 + "-production-secret-key-with-enough-entropy-9f8e7d6c5b",
    "ALLOWED_HOSTS": "gym.example.com",
    "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
}


def test_check_deploy_is_clean_on_production_settings():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_start_refused_without_secret_key_when_debug_off():
    env = {**PRODUCTION, "SECRET_KEY": ""}
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_start_refused_without_encryption_keys_when_debug_off():
    env = {**PRODUCTION, "FIELD_ENCRYPTION_KEYS": ""}
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "FIELD_ENCRYPTION_KEYS is not set" in result.stderr


def test_debug_derives_a_development_encryption_key(settings):
    [key] = settings.FIELD_ENCRYPTION_KEYS
    assert Fernet(key.encode()).decrypt(Fernet(key.encode()).encrypt(b"x")) == b"x"


def test_database_url_selects_postgresql():
    script = (
        "import django;from django.conf import settings;django.setup();"
        "d=settings.DATABASES['default'];print(d['ENGINE'],d['NAME'],d['HOST'],d['PORT'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gymnasia.settings",
            "DEBUG": "1",
            "DATABASE_URL": "postgres://gym:pw@db.internal:6543/gymdb",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split() == [
        "django.db.backends.postgresql",
        "gymdb",
        "db.internal",
        "6543",
    ]


def test_celery_reliability_settings():
    from gymnasia.celery import app

    conf = app.conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.broker_transport_options["visibility_timeout"] > conf.task_time_limit


@pytest.mark.django_db
def test_no_model_change_lacks_a_migration():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


@pytest.mark.django_db
def test_home_and_health_answer(client):
    assert client.get("/").status_code == 200
    assert client.get("/healthz").json() == {"status": "ok", "rate_limits": "shared"}


@pytest.mark.django_db
def test_home_links_to_the_demo_site_on_the_embedded_default(client, settings):
    settings.DEMO_SITE = True
    assert 'href="/demo/"' in client.get("/").content.decode()


@pytest.mark.django_db
def test_home_has_no_demo_link_in_production(client, settings):
    settings.DEMO_SITE = False
    assert 'href="/demo/"' not in client.get("/").content.decode()
