"""Phone numbers in one form, E.164 (``+34600111222``), so that a member's
number and the number WhatsApp reports for a sender (``wa_id``, digits without
the plus) can be compared as they are."""

from __future__ import annotations

import re

#: Separators people write inside a number: spaces, dots, dashes, brackets.
SEPARATORS = re.compile(r"[\s.\-()/]")
#: E.164: a country code and number, at most 15 digits, none leading with zero.
E164 = re.compile(r"^\+[1-9][0-9]{6,14}$")


def phone_e164(value: str) -> str:
    """``value`` in E.164 when it is written with its country code (``+34 600
    11 12 22``, ``0034600111222``) or is a WhatsApp ``wa_id`` (digits only,
    country code first); "" when it is not a number in international form (a
    national number alone names no country, and is never guessed)."""
    digits = SEPARATORS.sub("", value or "")
    if digits.startswith("00"):
        digits = "+" + digits[2:]
    elif digits and not digits.startswith("+"):
        digits = "+" + digits
    return digits if E164.match(digits) else ""


def phone_stored(value: str) -> str:
    """What a member's phone field keeps: the number in E.164 when it can be
    read so, else as written (the admin's form refuses it; an import keeps it
    for a person to correct, and it matches no sender)."""
    return phone_e164(value) or (value or "").strip()
