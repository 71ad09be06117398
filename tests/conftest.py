"""Fixtures shared by the whole suite."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.apps import apps
from django.db import connection


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Tests that only mean something on PostgreSQL are skipped elsewhere, visibly."""
    if connection.vendor == "postgresql":
        return
    skip = pytest.mark.skip(
        reason="needs PostgreSQL (set DATABASE_URL to a postgres:// URL)"
    )
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


DOMAIN_APPS = (
    "gyms",
    "nutrition",
    "classes",
    "memberships",
    "tools",
    "agents",
    "approvals",
)


@pytest.fixture
def row_counts() -> Callable[[], dict[str, int]]:
    """A function that counts the rows of every table of the domain and the harness."""

    def count() -> dict[str, int]:
        return {
            model._meta.label: model._default_manager.count()
            for label in DOMAIN_APPS
            for model in apps.get_app_config(label).get_models()
        }

    return count


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Hashing strength is not under test; a fast hasher keeps the suite quick."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fresh_cache():
    """Rate-limit counters and other cached state start empty in every test."""
    from django.core.cache import caches

    from agents import limits

    caches["default"].clear()
    caches["local"].clear()
    limits._away_until = None  # counting shared, as a process starts
    yield
