"""Who is talking: the member identity token a gym's site signs for its widget.

A JWT signed with HS256 only, with the agent's identity secret; claims ``sub`` (the
member's id at the gym), ``aud`` (the agent's public key), ``exp`` (at most an hour
ahead; 30 s of clock leeway), optional ``name`` and ``email``. A valid token whose
member is new creates the member (the gym's site is the authority on its members).
An invalid token is refused, never downgraded to an anonymous visitor.
"""

from __future__ import annotations

import time
from typing import Any

import jwt

from agents.models import Agent
from gymnasia.gyms.models import Member
from gymnasia.text import storable, storable_text

LEEWAY_SECONDS = 30
MAX_LIFETIME_SECONDS = 3600


class IdentityRefused(Exception):
    """The identity token is not valid for this agent."""


def identity_member(*, agent: Agent, token: str) -> Member:
    """The member a valid identity token names, created on first sight."""
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            agent.identity_secret,
            algorithms=["HS256"],
            audience=agent.public_key,
            leeway=LEEWAY_SECONDS,
            options={"require": ["sub", "aud", "exp"]},
        )
    except jwt.PyJWTError as error:
        raise IdentityRefused(
            f"the identity token was refused ({type(error).__name__})"
        ) from None
    expires = claims["exp"]
    # PyJWT takes anything int() takes ("1767225600" too); the claim is a number.
    if isinstance(expires, bool) or not isinstance(expires, int | float):
        raise IdentityRefused("the identity token's expiry is not a number")
    if expires > time.time() + MAX_LIFETIME_SECONDS + LEEWAY_SECONDS:
        raise IdentityRefused("the identity token lives longer than one hour")
    subject = claims["sub"]
    if (
        not isinstance(subject, str)
        or not subject.strip()
        or len(subject) > 200
        or not storable(subject)
    ):
        raise IdentityRefused("the identity token has no usable subject")
    # Name and email are for people to read: kept as far as their columns allow.
    member, _ = Member.objects.get_or_create(
        business_id=agent.business_id,
        external_id=subject,
        defaults={
            "name": storable_text(str(claims.get("name") or ""))[:200],
            "email": storable_text(str(claims.get("email") or ""))[:254],
        },
    )
    return member
