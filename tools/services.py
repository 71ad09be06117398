"""Changes owned by the harness: integrations and staff handoffs."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from django.db import DatabaseError
from django.utils import timezone
from django.utils.translation import gettext as _

from gymnasia.errors import Conflict, DomainError, InvalidValue, NotFound
from gymnasia.gyms.models import Business, Member
from gymnasia.text import text_checked_storable
from tools.crypto import encrypt, masked
from tools.integrations.errors import IntegrationUnavailable
from tools.models import Handoff, Integration, ToolCallLog
from tools.types import UNKNOWN_OUTCOME, UNVERIFIABLE


def handoff_create(
    *,
    business: Business,
    member: Member | None,
    conversation_key: str,
    cause: Handoff.Cause,
    tried: dict[str, Any] | None = None,
    reason: str = "",
    tool_call: ToolCallLog | None = None,
    known: str = "",
) -> Handoff:
    """Give a case to the gym's staff, with why (a code, read in the reader's
    language), what was tried and, for a member asking for a person, their own
    words (R9)."""
    return Handoff.objects.create(
        business=business,
        member=member,
        conversation_key=conversation_key,
        cause=cause,
        reason=reason,
        tried=tried or {},
        tool_call=tool_call,
        known=known,
    )


def unknown_outcome_result(handoff: Handoff) -> dict[str, Any]:
    """The result of a write whose outcome nobody knows (R9), with its handoff."""
    return {
        "status": UNKNOWN_OUTCOME,
        "verification": UNVERIFIABLE,
        "handoff": str(handoff.pk),
        "message": "It is not known whether the change was saved; the gym's staff "
        "will check it.",
    }


STRIPE_KEY_PATTERN = re.compile(r"^(sk|rk)_(test|live)_[A-Za-z0-9]{10,200}$")


def stripe_key_problem(secret_key: str) -> str | None:
    """Why a Stripe secret key is malformed, or ``None`` when it looks right."""
    if not STRIPE_KEY_PATTERN.match(secret_key):
        return _(
            "A Stripe secret key looks like sk_live_… or sk_test_… (or rk_… for a "
            "restricted key), with no spaces."
        )
    return None


def integration_credentials_set(*, integration: Integration, secret_key: str) -> None:
    """Store a new secret key, encrypted; only its last four characters stay readable."""
    problem = stripe_key_problem(secret_key)
    if problem:
        raise InvalidValue(problem, field="secret_key")
    integration.credentials_encrypted = encrypt(json.dumps({"secret_key": secret_key}))
    integration.credentials_hint = masked(secret_key)
    integration.save(
        update_fields=["credentials_encrypted", "credentials_hint", "updated_at"]
    )


def mindbody_credentials_set(
    *,
    integration: Integration,
    site_id: str,
    api_key: str,
    username: str,
    password: str,
) -> None:
    """Store a Mindbody site's credentials, encrypted; only the API key's last
    four characters stay readable."""
    plain = {
        "site_id": site_id,
        "api_key": api_key,
        "username": username,
        "password": password,
    }
    integration.credentials_encrypted = encrypt(json.dumps(plain))
    integration.credentials_hint = masked(api_key)
    integration.save(
        update_fields=["credentials_encrypted", "credentials_hint", "updated_at"]
    )


def mindbody_credentials_problem(
    *, site_id: str, api_key: str, username: str, password: str, base_url: str
) -> str | None:
    """What Mindbody refused of these credentials (a token issued, the site
    read), in plain words of the active language; ``None`` when they work."""
    from tools.integrations.errors import IntegrationError
    from tools.integrations.mindbody.client import Connection, MindbodyClient

    trial = MindbodyClient(
        Connection(
            integration_id=0,  # no stored integration: nothing is marked
            site_id=site_id,
            api_key=api_key,
            username=username,
            password=password,
            base_url=base_url,
            fingerprint=secrets.token_hex(8),  # a token of its own
        )
    )
    try:
        trial.health()
    except IntegrationError as problem:
        return _(str(problem))
    return None


def mindbody_stored_credentials_problem(
    *, integration: Integration, base_url: str
) -> str | None:
    """What Mindbody refuses of the integration's stored credentials at
    ``base_url`` (a changed address tried before it is saved), in plain words;
    ``None`` when they work there."""
    from tools.crypto import CannotDecrypt, decrypt

    try:
        stored = json.loads(decrypt(integration.credentials_encrypted))
    except (CannotDecrypt, ValueError):
        return _(
            "the stored credentials cannot be read; give the site id, the API key "
            "and the staff user's name and password again"
        )
    return mindbody_credentials_problem(
        site_id=str(stored["site_id"]),
        api_key=stored["api_key"],
        username=stored["username"],
        password=stored["password"],
        base_url=base_url,
    )


def integration_health_check(
    *, integration: Integration, connecting: bool = False
) -> bool:
    """Check that the integration works now and record the result.

    A built-in integration that is switched on is checked by reading the gym's
    database; Stripe by reading the account's balance with the stored key;
    Mindbody by issuing a user token and reading the site. A failing
    integration's tools are not offered until a check passes again. A passing
    check connects a failing integration, or one being connected (``connecting``:
    an owner pasting a Stripe key); one the owner disconnected stays so.
    """
    from tools.integrations import mindbody_api, stripe_client
    from tools.integrations.errors import IntegrationError

    error = ""
    try:
        if integration.kind == Integration.Kind.STRIPE:
            if not integration.credentials_encrypted:
                raise IntegrationUnavailable("no Stripe key is stored")
            stripe_client(integration).health()
        elif integration.kind == Integration.Kind.MINDBODY:
            if not integration.credentials_encrypted:
                raise IntegrationUnavailable("no Mindbody credentials are stored")
            mindbody_api(integration).health()
        else:
            Business.objects.filter(pk=integration.business_id).exists()
    except (IntegrationError, DatabaseError, DomainError) as problem:
        error = str(problem)[:500]
    integration.last_checked_at = timezone.now()
    integration.last_error = error
    if error:
        integration.status = Integration.Status.FAILING
    elif connecting or integration.status == Integration.Status.FAILING:
        integration.status = Integration.Status.CONNECTED
    integration.save(
        update_fields=["last_checked_at", "last_error", "status", "updated_at"]
    )
    return not error


#: The longest note staff may leave on a case (a member may read it).
NOTE_MAX = 2000


def handoff_resolve(
    *, handoff_id: Any, business_ids: Any, user: Any, resolution: str, note: str = ""
) -> Handoff:
    """Record what actually happened, once; the verification log shows it."""
    if resolution not in Handoff.Resolution.values:
        raise InvalidValue(_("Say whether it was done, not done, or leave a note."))
    if resolution == Handoff.Resolution.NOTE and not note.strip():
        raise InvalidValue(_("Write the note for the member."))
    if len(note) > NOTE_MAX:
        raise InvalidValue(
            _("The note is too long: at most %(count)s characters.")
            % {"count": NOTE_MAX}
        )
    text_checked_storable(note)
    handoff = Handoff.objects.filter(
        pk=handoff_id, business_id__in=business_ids
    ).first()
    if handoff is None:
        raise NotFound(_("No such handoff."))
    changed = Handoff.objects.filter(pk=handoff.pk, status=Handoff.Status.OPEN).update(
        status=Handoff.Status.RESOLVED,
        resolution=resolution,
        note=note,
        resolved_at=timezone.now(),
        resolved_by=user,
    )
    if not changed:
        raise Conflict(_("This case was already settled."))
    handoff.refresh_from_db()
    log = handoff.tool_call
    if log is not None:
        log.steps = [
            *log.steps,
            {"step": "settled by staff", "resolution": resolution, "note": note[:500]},
        ]
        log.save(update_fields=["steps"])
    return handoff
