"""The owner's WhatsApp channel: connecting it (secrets encrypted, R12) and its
test, which reads the number's details from the Graph API."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.models import Agent, WhatsAppChannel
from agents.whatsapp.graph import GraphClient, GraphError, NotSent, Refused, Unknown
from gymnasia.errors import InvalidValue
from tools.crypto import encrypt


def whatsapp_channel_connect(
    *,
    agent: Agent,
    phone_number_id: str,
    business_account_id: str,
    access_token: str,
    app_secret: str,
    verify_token: str,
    api_base: str = "",
) -> WhatsAppChannel:
    """Connect (or reconnect) the agent's WhatsApp number."""
    api_base = (api_base or settings.WHATSAPP_API_BASES[0]).rstrip("/")
    if api_base not in settings.WHATSAPP_API_BASES:
        raise InvalidValue(
            _("This installation does not allow that Graph API address."),
            field="api_base",
        )
    channel, _created = WhatsAppChannel.objects.update_or_create(
        agent=agent,
        defaults={
            "api_base": api_base,
            "phone_number_id": phone_number_id.strip(),
            "business_account_id": business_account_id.strip(),
            "access_token_encrypted": encrypt(access_token.strip()),
            "app_secret_encrypted": encrypt(app_secret.strip()),
            "verify_token_encrypted": encrypt(verify_token.strip()),
        },
    )
    return channel


def whatsapp_webhook_path(channel: WhatsAppChannel) -> str:
    """The webhook's path, for the owner to paste into Meta's app settings."""
    return reverse("whatsapp-webhook", args=[channel.agent.public_key])


def _problem(error: GraphError) -> str:
    """What failed, in words an owner can act on (never the token)."""
    if isinstance(error, NotSent):
        return _(
            "Meta's Graph API could not be reached from this server, or its "
            "address is not one this installation allows."
        )
    if isinstance(error, Unknown):
        return _("Meta's Graph API did not answer properly; try again in a moment.")
    if not isinstance(error, Refused) or error.code == 190:
        return _(
            "Meta refused the access token: it is wrong, expired or revoked. "
            "Create a new one for the system user and save it here."
        )
    if error.code in (100, 803):
        return _(
            "Meta does not know this phone number id, or the token may not read "
            "it. Copy the id from WhatsApp Manager's API setup page."
        )
    return _("Meta refused the request (code %(code)s): %(words)s") % {
        "code": error.code,
        "words": error.words,
    }


def whatsapp_channel_test(*, channel: WhatsAppChannel) -> str:
    """Read the number's details from the Graph API; "" when it answered, else
    what failed. The result is kept on the channel."""
    client = GraphClient(
        base_url=channel.api_base,
        phone_number_id=channel.phone_number_id,
        access_token=channel.access_token,
    )
    try:
        details = client.phone_number()
    except GraphError as error:
        problem = _problem(error)
    else:
        problem = ""
        number = str(details.get("display_phone_number") or "")[:40]
        channel.display_phone_number = number or channel.display_phone_number
    channel.tested_at = timezone.now()
    channel.test_problem = problem
    channel.save(update_fields=["display_phone_number", "tested_at", "test_problem"])
    return problem
