"""Telling the member what became of a request that waited for staff, or of a
write whose turn stopped while it ran.

This is the one service through which ``approvals`` posts back into a conversation.
An executed request continues the conversation through the turn loop a member's
message uses (``agents.turn.turn_continue``): the action and its result join the
history under their own call id, and the model writes the member's message from
the result, with the R10 sentence in front when it was not verified. A rejection, an
expiry or a corrected request (with what staff changed) is told in fixed, honest
words: nothing was done, and an expiry is not a rejection. A write handed to staff
because its turn stopped is told with R10's sentence for a change that could not be
confirmed.
"""

from __future__ import annotations

import uuid
from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils.translation import gettext, override

from agents.conversations import message_add
from agents.models import Channel, Conversation, Message
from agents.turn import turn_continue
from agents.verdict import NOT_CONFIRMED, SENTENCES
from tools.naming import arguments_changed
from tools.sentences import request_sentence
from tools.types import ERROR_STATUSES, ToolCall, ToolResult

EXECUTED = ("succeeded", "failed", "unknown")
#: A turn's write whose process stopped while it ran; staff will check it.
INTERRUPTED = "interrupted"


def _conversation(key: str) -> Conversation | None:
    try:
        uuid.UUID(key)
    except ValueError:
        return None
    conversation = (
        Conversation.objects.select_related("agent__business", "business", "member")
        .filter(pk=key)
        .first()
    )
    if conversation is not None:
        # What follows (a fixed notice, or the continued turn and its R10
        # sentence) is written in the member's language as it stands now.
        conversation.language = notice_language(conversation)
    return conversation


def notice_language(conversation: Conversation) -> str:
    """The language a later notice of a conversation is written in: the member
    record's (it may have been set since the conversation began), else the
    conversation's, else the agent's."""
    member = conversation.member
    return (
        (member.language if member else "")
        or conversation.language
        or conversation.agent.language
    )


def _request_said(
    conversation: Conversation, tool_name: str, arguments: dict[str, Any]
) -> str:
    """A request as the member reads it, in the active language: one sentence
    ("Book Spinning on Tuesday 8 December, 19:00, with Marta Gil")."""
    return request_sentence(
        business=conversation.business,
        member=conversation.member,
        tool_name=tool_name,
        arguments=arguments,
    )


def _fixed_notice(
    conversation: Conversation,
    status: str,
    tool_name: str,
    arguments: dict[str, Any],
    reason: str,
    changes: dict[str, Any] | None,
) -> str:
    if status == INTERRUPTED:  # R10's own words, as a reply would have begun
        return SENTENCES.get(conversation.language, SENTENCES["en"])[NOT_CONFIRMED]
    with override(conversation.language):
        title = _request_said(conversation, tool_name, arguments)
        if status == "rejected":
            text = gettext(
                "The gym's staff did not approve your request (%(title)s)."
            ) % {"title": title}
            if reason:
                reason = reason.rstrip(".")
                text += " " + gettext("Their reason: %(reason)s.") % {"reason": reason}
            return text + " " + gettext("Nothing was changed.")
        if status == "expired":
            return gettext(
                "Your request (%(title)s) expired before the staff could review it; "
                "nothing was changed. You can ask again."
            ) % {"title": title}
        return gettext(
            "The gym's staff corrected your request (%(title)s): %(changes)s. They "
            "will decide on the corrected one; nothing has been done yet."
        ) % {
            "title": title,
            "changes": arguments_changed(
                changes or {},
                business=conversation.business,
                member=conversation.member,
            ),
        }


def conversation_outcome_post(
    *,
    conversation_key: str,
    action_id: str,
    tool_name: str,
    arguments: dict[str, Any],
    status: str,
    payload: dict[str, Any] | None = None,
    reason: str = "",
    changes: dict[str, Any] | None = None,
) -> Message | None:
    """Post what became of a pending request into its conversation, if it has one.
    A corrected request comes with its ``changes``, ``{argument: [before, after]}``."""
    conversation = _conversation(conversation_key)
    if conversation is None:
        return None
    with override(conversation.language):
        asked = _request_said(conversation, tool_name, arguments)
    if status not in EXECUTED:
        text = _fixed_notice(
            conversation, status, tool_name, arguments, reason, changes
        )
        notice = message_add(
            conversation=conversation, role=Message.Role.NOTICE, text=text
        )
        _whatsapp_queued(conversation, [notice], asked)
        return notice
    call = ToolCall(id=f"approved_{action_id}", name=tool_name, arguments=arguments)
    result_payload = dict(
        payload or {"status": "unknown_outcome", "verification": "unverifiable"}
    )
    result = ToolResult(
        call_id=call.id,
        status=str(result_payload.get("status")),
        payload=result_payload,
        is_error=result_payload.get("status") in ERROR_STATUSES,
    )
    with override(conversation.language):
        unanswered = gettext("The staff reviewed your request (%(title)s).") % {
            "title": asked
        }
    told = async_to_sync(turn_continue)(
        conversation,
        call=call,
        result=result,
        unanswered=unanswered,
        about={"approved_action": action_id},
    )
    _whatsapp_queued(conversation, told, asked)
    return told[-1] if told else None


def _whatsapp_queued(
    conversation: Conversation, messages: list[Message], asked: str
) -> None:
    """On WhatsApp, the member is sent what was added, once it is committed
    (``agents.whatsapp.sending``: within 24 hours, else the owner's template)."""
    if conversation.channel != Channel.WHATSAPP or not messages:
        return
    from agents.tasks import whatsapp_deliver_messages  # it imports the turn too

    ids = [m.pk for m in messages]
    transaction.on_commit(lambda: whatsapp_deliver_messages.delay(ids, asked))


def conversation_handoff_settled(
    *, conversation_key: str, resolution: str, note: str = ""
) -> Message | None:
    """Tell the member what staff found when they settled a handed-off case."""
    conversation = _conversation(conversation_key)
    if conversation is None:
        return None
    with override(conversation.language):
        if resolution == "done":
            text = gettext("A member of staff checked your request: it was done.")
        elif resolution == "not_done":
            text = gettext("A member of staff checked your request: it was not done.")
        else:
            text = gettext("A member of staff looked at your request.")
        if note:
            text += " " + note
        asked = gettext("Your request to the gym's staff")
    notice = message_add(conversation=conversation, role=Message.Role.NOTICE, text=text)
    _whatsapp_queued(conversation, [notice], asked)
    return notice
