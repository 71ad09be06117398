"""Sending to a member on WhatsApp: replies, the 24-hour window, templates.

A free-form message is sent only within 24 hours of the member's last message
(WhatsApp's customer service window). Later (an approval decided the next day)
the outcome goes as the owner's template, with what was asked and what
happened; with no template set it waits in the conversation and staff are told
the member could not be reached. Each message sent is a ``WhatsAppReply`` row,
taken once (a compare-and-set) before it is sent, so a task run again sends
nothing twice. A send is tried again only when it provably did not arrive (the
connection was refused, R6); a refusal of Meta's is recorded with its code and
told to staff in words; a send whose answer was lost is never sent again.
"""

from __future__ import annotations

import datetime
import json
import re
import time

from django.utils import timezone
from django.utils.translation import gettext, override
from django.utils.translation import gettext_lazy as _

from agents.models import Message, WhatsAppChannel, WhatsAppReply
from agents.whatsapp.graph import GraphClient, NotSent, Refused, Unknown
from tools.models import Handoff
from tools.services import handoff_create

#: WhatsApp's longest text message, in characters.
TEXT_LIMIT = 4096
#: The customer service window: free-form messages within it only.
WINDOW = datetime.timedelta(hours=24)
#: Tries of a send whose connection was refused, and the pause before each again.
SEND_PAUSES = (0.5, 1.0, 2.0, 4.0)
#: The longest template parameters sent: what was asked, what happened. Meta
#: refuses a template whose body, parameters filled in, is over 1,024
#: characters (132005); these leave the template's own words 124.
ASKED_LIMIT = 200
HAPPENED_LIMIT = 700
WHITESPACE = re.compile(r"\s+")

#: Meta's refusals, as staff read them (Cloud API error codes).
REFUSALS = {
    131047: _(
        "More than 24 hours have passed since the member's last message, and "
        "WhatsApp only takes a template then."
    ),
    132001: _("The template does not exist in that language or is not approved."),
    132015: _("The template is paused by Meta for its low quality."),
    132016: _("The template is disabled by Meta."),
    132000: _("The template expects a different number of parameters."),
    132005: _("The template's text, with the parameters filled in, is too long."),
    132018: _("A template parameter has characters WhatsApp does not accept."),
    131026: _("The number is not on WhatsApp, or cannot receive this message."),
    131030: _("The number is not on the test number's list of recipients."),
    130429: _("WhatsApp's limit of messages per second was reached."),
    131056: _("Too many messages were sent to this number in a short time."),
    190: _("Meta refused the access token: it expired or was revoked."),
}
NO_TEMPLATE = _(
    "More than 24 hours have passed since the member's last message, and no "
    "outcome template is set in the WhatsApp channel, so nothing was sent."
)
NOT_REACHED = _("Meta's Graph API could not be reached.")
NO_ANSWER = _(
    "Meta did not answer the send (or failed while taking it): the member may "
    "or may not have received the message. It is not sent again."
)


def reply_parts(text: str, limit: int = TEXT_LIMIT) -> list[str]:
    """The text in messages of at most ``limit`` characters, cut at a paragraph,
    a line or a space where there is one."""
    parts = []
    rest = text.strip()
    while len(rest) > limit:
        cut = max(rest.rfind(sep, 0, limit + 1) for sep in ("\n\n", "\n", " "))
        if cut <= 0:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return [*parts, rest] if rest else parts


def window_open(last_inbound_at: datetime.datetime | None) -> bool:
    """Whether a free-form message may be sent now."""
    return last_inbound_at is not None and timezone.now() - last_inbound_at < WINDOW


def _parameter(text: str, limit: int) -> str:
    """A template parameter: one line (Meta refuses new lines, tabs and runs
    of spaces in one), at most ``limit`` characters."""
    flat = WHITESPACE.sub(" ", text).strip() or "-"
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


def whatsapp_unreached_told(
    message: Message, words: str, code: int | None = None
) -> None:
    """Tell staff the member did not get a message on WhatsApp, and why."""
    conversation = message.conversation
    handoff_create(
        business=conversation.business,
        member=conversation.member,
        conversation_key=str(conversation.pk),
        cause=Handoff.Cause.WHATSAPP_UNREACHED,
        tried={"channel": "whatsapp", "message": message.pk, "code": code},
        known=words,
    )


def _rows(
    message: Message, channel: WhatsAppChannel, asked: str
) -> list[WhatsAppReply]:
    """The message as the rows to send (made once: a task run again finds them);
    none when it may not be sent (outside the window, no template)."""
    conversation = message.conversation
    if window_open(conversation.last_inbound_at):
        kind = WhatsAppReply.Kind.TEXT
        bodies = reply_parts(message.text)
    elif channel.template_name:
        kind = WhatsAppReply.Kind.TEMPLATE
        params = [
            _parameter(asked, ASKED_LIMIT),
            _parameter(message.text, HAPPENED_LIMIT),
        ]
        bodies = [json.dumps(params, ensure_ascii=False)]
    else:
        kind = WhatsAppReply.Kind.TEXT
        bodies = []
    made = [
        WhatsAppReply(
            conversation=conversation, message=message, part=i, kind=kind, body=body
        )
        for i, body in enumerate(bodies)
    ]
    WhatsAppReply.objects.bulk_create(made, ignore_conflicts=True)
    return list(WhatsAppReply.objects.filter(message=message).order_by("part"))


def _send(
    client: GraphClient, channel: WhatsAppChannel, reply: WhatsAppReply, to: str
) -> str:
    """Send one row; tried again only while the connection is refused."""
    for pause in (*SEND_PAUSES, None):
        try:
            if reply.kind == WhatsAppReply.Kind.TEMPLATE:
                return client.send_template(
                    to=to,
                    name=channel.template_name,
                    language=channel.template_language,
                    parameters=json.loads(reply.body),
                )
            return client.send_text(to=to, text=reply.body)
        except NotSent:
            if pause is None:
                raise
            time.sleep(pause)
    raise AssertionError("unreachable")


def _record(reply: WhatsAppReply, **fields: object) -> None:
    WhatsAppReply.objects.filter(pk=reply.pk).update(status_at=timezone.now(), **fields)


def whatsapp_deliver(*, message: Message, asked: str = "") -> None:
    """Send a message of a WhatsApp conversation to its member: as text within
    the 24 hours, else as the owner's template (``asked``: what the member
    asked, its first parameter), else not at all, and staff are told."""
    message = Message.objects.select_related(
        "conversation__business", "conversation__member"
    ).get(pk=message.pk)
    conversation = message.conversation
    if not message.text.strip() or not conversation.wa_id:
        return
    channel = (
        WhatsAppChannel.objects.select_related("agent")
        .filter(agent_id=conversation.agent_id)
        .first()
    )
    if channel is None:  # disconnected since: the message waits in the conversation
        return
    with override(channel.agent.language):
        rows = _rows(message, channel, asked)
        if not rows:
            whatsapp_unreached_told(message, str(NO_TEMPLATE))
            return
        client = GraphClient(
            base_url=channel.api_base,
            phone_number_id=channel.phone_number_id,
            access_token=channel.access_token,
        )
        for reply in rows:
            if not _sent_one(client, channel, reply, message):
                break


def _sent_one(
    client: GraphClient,
    channel: WhatsAppChannel,
    reply: WhatsAppReply,
    message: Message,
) -> bool:
    """Take one row and send it; whether the next may follow."""
    Status = WhatsAppReply.Status
    taken = WhatsAppReply.objects.filter(pk=reply.pk, status=Status.PENDING).update(
        status=Status.SENDING
    )
    if not taken:
        return reply.status not in (Status.REFUSED, Status.UNKNOWN, Status.NOT_SENT)
    try:
        wamid = _send(client, channel, reply, message.conversation.wa_id)
    except Refused as refusal:
        words = str(REFUSALS.get(refusal.code or 0) or refusal.words)
        _record(
            reply,
            status=Status.REFUSED,
            error_code=refusal.code,
            error_title=refusal.words[:300],
        )
        whatsapp_unreached_told(
            message,
            gettext("WhatsApp refused the message (code %(code)s): %(words)s")
            % {"code": refusal.code, "words": words},
            refusal.code,
        )
        return False
    except NotSent:
        _record(reply, status=Status.NOT_SENT, error_title=str(NOT_REACHED))
        whatsapp_unreached_told(message, str(NOT_REACHED))
        return False
    except Unknown:
        _record(reply, status=Status.UNKNOWN, error_title=str(NO_ANSWER)[:300])
        whatsapp_unreached_told(message, str(NO_ANSWER))
        return False
    _record(reply, status=Status.ACCEPTED, wamid=wamid)
    return True
