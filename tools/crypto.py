"""Encryption at rest of integration credentials and agent secrets (R12).

MultiFernet with the keys of ``FIELD_ENCRYPTION_KEYS``: the first key encrypts, every
key decrypts, so keys can be rotated by putting a new one first.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class CannotDecrypt(Exception):
    """The value was encrypted with a key that is no longer configured."""


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(key.encode()) for key in settings.FIELD_ENCRYPTION_KEYS])


def encrypt(plain: str) -> str:
    return _fernet().encrypt(plain.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise CannotDecrypt(
            "the value cannot be decrypted with the configured keys"
        ) from None


def rotate(token: str) -> str:
    """Re-encrypt a value with the first (newest) key."""
    return _fernet().rotate(token.encode()).decode()


def masked(plain: str) -> str:
    """What a page may show of a secret: at most its last four characters."""
    if len(plain) < 12:
        return "••••"
    return f"••••{plain[-4:]}"
