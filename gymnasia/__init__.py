"""Gymnasia: a gym's web application with an assistant that can act."""

from gymnasia.celery import app as celery_app

__all__ = ["celery_app"]
