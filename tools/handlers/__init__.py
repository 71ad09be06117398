"""Handlers and verifiers of the published tools, registered on import."""

from tools.handlers import classes, memberships, nutrition, payments, requests, staff

__all__ = ["classes", "memberships", "nutrition", "payments", "requests", "staff"]
