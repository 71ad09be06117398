"""The settings of the webhook tests' Celery worker: Gymnasia's own, with the
retries a second apart, so that eight tries take seconds rather than an hour."""

from gymnasia.settings import *  # noqa: F403

WEBHOOK_RETRY_DELAYS = [1] * 7
