"""The mobiles of the gym's Mindbody clients on its members' records, so that a
member who writes to the gym's WhatsApp number from her mobile is recognised
(``agents.whatsapp``).

Mindbody's client search reads names, e-mails and ids, not phones, so numbers
are read ahead: the clients changed since the last read
(``request.lastModifiedDate``; every client the first time and after the owner
saves the integration), each client's mobile written in E.164 on the member the
client is:

- when the gym's site signs members with their Mindbody client id, the member
  with that id, made when the gym has none yet (a client who never used the
  site's widget still writes on WhatsApp); Mindbody is then the number's only
  source, and a client left with no usable mobile leaves her member with none;
- otherwise the one member with the client's e-mail; no member is made (the
  site's own id for her is not known here).

A mobile written without its country code is read with the one the owner gave
(``config["mobile_country_code"]``), never guessed: without it such a mobile
matches nobody. A read happens at most once a minute per gym.
"""

from __future__ import annotations

import datetime
import logging
import re
from typing import Any

from django.core.cache import cache
from django.utils import timezone

from gymnasia.gyms.models import Business, Member
from gymnasia.gyms.phones import SEPARATORS, phone_e164
from tools.integrations.errors import IntegrationError

logger = logging.getLogger(__name__)

#: At most one read of the changed clients per gym in this many seconds.
READ_AGAIN_AFTER_SECONDS = 60
#: How far back of the last read the next one starts: Mindbody's dates are the
#: site's clock, which may be behind ours.
READ_OVERLAP = datetime.timedelta(days=1)
#: A full read follows up to 20,000 clients (a page is 100).
MAX_CLIENT_PAGES = 200
#: The owner's settings a read depends on.
SETTINGS_READ_WITH = ("member_id_is_client_id", "mobile_country_code", "base_url")
COUNTRY_CODE = re.compile(r"^[1-9][0-9]{0,2}$")


def mobile_e164(value: Any, country_code: str) -> str:
    """A client's mobile in E.164: as written when it starts with ``+`` or
    ``00``; a national number with the owner's country code (its trunk ``0``
    dropped); "" otherwise."""
    written = SEPARATORS.sub("", str(value or ""))
    if written.startswith(("+", "00")):
        return phone_e164(written)
    if written.isdigit() and COUNTRY_CODE.match(country_code or ""):
        return phone_e164("+" + country_code + written.removeprefix("0"))
    return ""


def _member_of(
    business: Business, client: dict[str, Any], *, by_client_id: bool
) -> Member | None:
    client_id = str(client.get("Id") or "")
    if by_client_id:
        if not client_id:
            return None
        name = " ".join(
            str(client.get(part) or "").strip() for part in ("FirstName", "LastName")
        ).strip()
        member, _made = Member.objects.get_or_create(
            business=business,
            external_id=client_id,
            defaults={"name": name[:200], "email": str(client.get("Email") or "")},
        )
        return member
    email = str(client.get("Email") or "").strip()
    if not email:
        return None
    found = list(Member.objects.filter(business=business, email__iexact=email)[:2])
    return found[0] if len(found) == 1 else None


def _read(integration: Any) -> int:
    """Read the changed clients and write their mobiles: the members whose
    phone changed."""
    from tools.integrations import mindbody_api
    from tools.models import Integration

    config = integration.config or {}
    business = integration.business
    params: dict[str, Any] = {}
    since = config.get("clients_read_at")
    if since:
        start = datetime.datetime.fromisoformat(since) - READ_OVERLAP
        local = timezone.localtime(start, business.zone).replace(tzinfo=None)
        params["request.lastModifiedDate"] = local.isoformat(timespec="seconds")
    started = timezone.now()
    changed = 0
    api = mindbody_api(integration)
    by_client_id = bool(config.get("member_id_is_client_id"))
    country_code = str(config.get("mobile_country_code") or "")
    for client in api.pages(
        "/client/clients", "Clients", params, max_pages=MAX_CLIENT_PAGES
    ):
        phone = mobile_e164(client.get("MobilePhone"), country_code)
        if not phone:
            if by_client_id and client.get("Id"):
                # Mindbody no longer gives her a number: the one she had may be
                # someone else's by now, and must not stand for her.
                changed += (
                    Member.objects.filter(
                        business=business, external_id=str(client["Id"])
                    )
                    .exclude(phone="")
                    .update(phone="")
                )
            continue
        member = _member_of(business, client, by_client_id=by_client_id)
        if member is not None and member.phone != phone:
            Member.objects.filter(pk=member.pk).update(phone=phone)
            changed += 1
    # Kept only while the owner's settings are the ones read with: her save
    # meanwhile (a new country code) starts the next read from the beginning.
    now = Integration.objects.filter(pk=integration.pk).values_list("config", flat=True)
    current = now.first() or {}
    if all(current.get(key) == config.get(key) for key in SETTINGS_READ_WITH):
        now.update(config={**current, "clients_read_at": started.isoformat()})
    return changed


def members_phones_read(business_id: int) -> int | None:
    """Bring the gym's Mindbody clients' mobiles to its members' records; the
    members whose phone changed, or ``None`` when nothing was read (no
    connected Mindbody, a read less than a minute ago, or Mindbody failed:
    logged, the sender then stays unrecognised)."""
    from tools.models import Integration

    integration = (
        Integration.objects.select_related("business")
        .filter(
            business_id=business_id,
            kind=Integration.Kind.MINDBODY,
            status=Integration.Status.CONNECTED,
        )
        .first()
    )
    if integration is None or not integration.credentials_encrypted:
        return None
    if not cache.add(
        f"mindbody-clients-read:{integration.pk}", 1, READ_AGAIN_AFTER_SECONDS
    ):
        return None
    try:
        return _read(integration)
    except IntegrationError as failed:
        logger.warning(
            "mindbody clients not read for business %s: %s",
            business_id,
            type(failed).__name__,
        )
        return None
