"""What a member sends on WhatsApp: who it is, their conversation, and the turn.

The webhook records each message once (``inbound_record``: the ``wamid`` is
unique) and a Celery task runs its turn (``inbound_turn``), through the same
``agents.turn.turn_run`` the widget uses; the replies go out through
``agents.whatsapp.sending``.
"""

from __future__ import annotations

import datetime
from typing import Any

from asgiref.sync import async_to_sync
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext, override

from agents.conversations import message_add
from agents.models import (
    Agent,
    Channel,
    Conversation,
    Message,
    WhatsAppChannel,
    WhatsAppInbound,
)
from agents.turn import turn_run
from agents.whatsapp.sending import whatsapp_deliver
from gymnasia.gyms.models import Member
from gymnasia.gyms.phones import phone_e164
from gymnasia.text import storable_text
from tools.integrations.mindbody.members import members_phones_read
from tools.models import Handoff
from tools.services import handoff_create

#: Longer than any task may run (``CELERY_TASK_TIME_LIMIT``): a turn taken this
#: long ago whose task is delivered again had its worker stop under it.
INBOUND_LEASE = datetime.timedelta(minutes=10)


def whatsapp_sender(*, business_id: int, wa_id: str) -> tuple[Member | None, bool]:
    """The member of the gym whose record has this number, and whether more
    than one has it (then none: a number two members share proves neither).

    The number is the member's ``phone`` (in E.164). A gym whose members live
    in Mindbody has its clients' mobiles read into it first (the clients changed
    since the last read, at most once a minute: ``members_phones_read``)."""
    phone = phone_e164(wa_id)
    if not phone:
        return None, False
    members_phones_read(business_id)
    found = list(Member.objects.filter(business_id=business_id, phone=phone)[:2])
    if len(found) == 1:
        return found[0], False
    return None, len(found) > 1


def whatsapp_conversation(
    *, agent: Agent, wa_id: str, member: Member | None
) -> Conversation:
    """The conversation of this number and member (or visitor) with the agent:
    one per member and channel, made on first sight."""
    found = Conversation.objects.select_related("agent__business", "business", "member")
    mine = found.filter(
        agent=agent, channel=Channel.WHATSAPP, wa_id=wa_id, member=member
    )
    existing = mine.first()
    if existing is not None:
        return existing
    language = (member.language if member else "") or agent.language
    try:
        with transaction.atomic():
            made = Conversation.objects.create(
                agent=agent,
                business_id=agent.business_id,
                member=member,
                language=language,
                channel=Channel.WHATSAPP,
                wa_id=wa_id,
            )
    except IntegrityError:  # another message of the number made it first
        return mine.get()
    return found.get(pk=made.pk)


def _sent_at(value: Any) -> datetime.datetime:
    """Meta's ``timestamp`` (Unix seconds, as text); now when unreadable or
    ahead of now (the 24 hours are never stretched by a sender's clock)."""
    now = timezone.now()
    try:
        moment = datetime.datetime.fromtimestamp(int(str(value)), tz=datetime.UTC)
    except (ValueError, OverflowError, OSError):
        return now
    return min(moment, now)


def inbound_record(
    *, channel: WhatsAppChannel, messages: list[dict[str, Any]]
) -> list[int]:
    """Record the messages of a delivery; the ids of those whose turn is still
    to run. A ``wamid`` seen before is the same message delivered again: its
    insert is refused by the unique ``wamid`` (one statement, no read before
    it); it is given again only while its turn has not been taken (its task may
    have been lost with the broker: Meta delivers again after an error), and
    the turn's task runs it once however often it is sent."""
    new = []
    for item in messages:
        kind = str(item.get("type") or "")
        text = ""
        if kind == "text":
            text = storable_text(str((item.get("text") or {}).get("body") or ""))
        try:
            with transaction.atomic():
                inbound = WhatsAppInbound.objects.create(
                    wamid=item["id"],
                    channel=channel,
                    wa_id=phone_e164(item["from"]) or item["from"][:32],
                    kind=kind[:20],
                    text=text,
                    sent_at=_sent_at(item.get("timestamp")),
                )
        except IntegrityError:
            waiting = WhatsAppInbound.objects.filter(
                wamid=item["id"], state=WhatsAppInbound.State.QUEUED
            ).values_list("pk", flat=True)
            new += list(waiting)
            continue
        new.append(inbound.pk)
    return new


def _ambiguous_told(conversation: Conversation) -> None:
    """Tell staff, once while the case is open, that the number is on more than
    one member's record."""
    cause = Handoff.Cause.WHATSAPP_AMBIGUOUS
    key = str(conversation.pk)
    if Handoff.objects.filter(
        conversation_key=key, cause=cause, status=Handoff.Status.OPEN
    ).exists():
        return
    handoff_create(
        business=conversation.business,
        member=None,
        conversation_key=key,
        cause=cause,
        tried={"channel": "whatsapp", "number": conversation.wa_id},
    )


def _window_opened(conversation: Conversation, moment: datetime.datetime) -> None:
    """The member wrote at ``moment``: the 24 hours run from their latest message."""
    Conversation.objects.filter(pk=conversation.pk).filter(
        Q(last_inbound_at__isnull=True) | Q(last_inbound_at__lt=moment)
    ).update(last_inbound_at=moment)
    conversation.refresh_from_db(fields=["last_inbound_at"])


def _stopped_told(inbound: WhatsAppInbound) -> None:
    """A turn taken longer ago than any task may run never finished (its
    worker stopped): whether the member's message was read is not known, so it
    is not run again (R9); staff are told the member got no answer."""
    conversation = inbound.conversation
    with override(inbound.channel.agent.language):
        words = gettext(
            "The assistant stopped while answering a WhatsApp message (its "
            "worker ended); the member got no answer to it."
        )
    handoff_create(
        business=inbound.channel.agent.business,
        member=conversation.member if conversation else None,
        conversation_key=str(conversation.pk) if conversation else "",
        cause=Handoff.Cause.WHATSAPP_UNREACHED,
        tried={"channel": "whatsapp", "received": inbound.wamid},
        known=words,
    )


def _taken(inbound_id: int) -> str:
    """Take the message's turn: ``taken`` once; ``stopped`` once for a turn
    whose worker ended (taken past the lease); else ``already taken``."""
    State = WhatsAppInbound.State
    now = timezone.now()
    mine = WhatsAppInbound.objects.filter(pk=inbound_id)
    if mine.filter(state=State.QUEUED).update(state=State.TAKEN, taken_at=now):
        return "taken"
    stopped = mine.filter(state=State.TAKEN, taken_at__lt=now - INBOUND_LEASE)
    if stopped.update(state=State.DONE):
        return "stopped"
    return "already taken"


def inbound_turn(*, inbound_id: int) -> str:
    """Run the turn of one message received, once: the first to take it runs
    it, a repeated task finds it taken. The replies are sent as they come."""
    taken = _taken(inbound_id)
    if taken == "already taken":
        return taken
    inbound = WhatsAppInbound.objects.select_related(
        "channel__agent__business", "conversation__member"
    ).get(pk=inbound_id)
    if taken == "stopped":
        _stopped_told(inbound)
        return taken
    agent = inbound.channel.agent
    member, ambiguous = whatsapp_sender(
        business_id=agent.business_id, wa_id=inbound.wa_id
    )
    conversation = whatsapp_conversation(
        agent=agent, wa_id=inbound.wa_id, member=member
    )
    WhatsAppInbound.objects.filter(pk=inbound_id).update(conversation=conversation)
    _window_opened(conversation, inbound.sent_at)
    if ambiguous:
        _ambiguous_told(conversation)
    if inbound.kind == "text" and inbound.text.strip():
        added = async_to_sync(turn_run)(conversation, inbound.text)[1:]
    else:
        with override(conversation.language):
            words = gettext(
                "I can only read text messages; please write your question."
            )
        added = [
            message_add(conversation=conversation, role=Message.Role.NOTICE, text=words)
        ]
    WhatsAppInbound.objects.filter(pk=inbound_id).update(
        state=WhatsAppInbound.State.DONE
    )
    for message in added:
        whatsapp_deliver(message=message, asked=inbound.text)
    return "done"
