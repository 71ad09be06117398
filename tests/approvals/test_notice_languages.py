"""What a member is told later, after staff decide, when a request expires or
a case is settled, is written in the member's language (the member record's,
else the conversation's, else the agent's), R10's sentences included: a Spanish
and an English member in one run, each reading every notice of theirs in their
own language, the request said as a sentence of that language."""

from __future__ import annotations

import datetime
import re
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.utils import timezone

from agents.conversations import conversation_start
from agents.models import Agent, Conversation, Message
from agents.outcomes import notice_language
from agents.turn import turn_run
from agents.verdict import SENTENCES
from approvals.services import (
    handoff_settle,
    pending_action_approve,
    pending_action_correct,
    pending_action_execute,
    pending_action_reject,
    pending_actions_expire,
)
from gymnasia.gyms.models import Member, StaffRole
from tests.faults import Fault, inject_fault
from tools.models import Handoff, ToolCallLog
from tools.services import handoff_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]

#: How each member asks, in their language, for a freeze of days 1 to 10 of a month.
ASKED = {
    "es": "Congela mi cuota del 1 al 10 de {es}",
    "en": "Freeze my membership from 1 to 10 {en}",
}
MONTHS = [("agosto", "August"), ("septiembre", "September"), ("octubre", "October")]
MONTHS += [("noviembre", "November"), ("junio", "June")]


def _said(language: str, es: str, en: str) -> str:
    """The request as the member's notices name it, the year when it is not this one."""
    if language == "es":
        return rf"Congelar la cuota del 1 al 10 de {es}(?: de \d{{4}})?"
    return rf"Freeze the membership from 1 to 10 {en}(?: \d{{4}})?"


def _expected(language: str) -> dict[str, str]:
    """Each notice a member reads, as a pattern in their language."""
    said = [_said(language, es, en) for es, en in MONTHS]
    sentences = SENTENCES[language]
    if language == "es":
        return {
            "done": r"Cuota congelada del \d+ (de \w+ )?al \d+ de \w+( de \d{4})?\.$",
            "not done": re.escape(sentences["not_done"] + "\n\n"),
            "rejected": rf"El equipo del gimnasio no ha aprobado tu solicitud "
            rf"\({said[2]}\)\. Su motivo: Obras\. No se ha cambiado nada\.$",
            "expired": rf"Tu solicitud \({said[3]}\) ha caducado antes de que",
            "corrected": rf"El equipo del gimnasio ha corregido tu solicitud "
            rf"\({said[4]}\): fin: ",
            "corrected expired": rf"Tu solicitud \({said[4].replace('10', '8')}\) "
            "ha caducado",
            "settled": r"Una persona del equipo ha revisado tu solicitud: no se hizo\.$",
        }
    return {
        "done": r"Membership frozen from \d+ (\w+ )?to \d+ \w+( \d{4})?\.$",
        "not done": re.escape(sentences["not_done"] + "\n\n"),
        "rejected": rf"The gym's staff did not approve your request \({said[2]}\)\. "
        r"Their reason: Obras\. Nothing was changed\.$",
        "expired": rf"Your request \({said[3]}\) expired before the staff",
        "corrected": rf"The gym's staff corrected your request \({said[4]}\): end: ",
        "corrected expired": rf"Your request \({said[4].replace('10', '8')}\) expired",
        "settled": r"A member of staff checked your request: it was not done\.$",
    }


def _ask(conversation: Conversation, language: str, es: str, en: str) -> None:
    """A freeze asked, waiting for staff: R10's sentence in front of the reply,
    in the member's language."""
    async_to_sync(turn_run)(conversation, ASKED[language].format(es=es, en=en))
    reply = conversation.messages.filter(role="assistant").latest("pk")
    assert reply.text.startswith(SENTENCES[language]["waits"]), reply.text


def _ask_five(conversation: Conversation, language: str) -> list[ToolCallLog]:
    for es, en in MONTHS:
        _ask(conversation, language, es, en)
    return list(
        ToolCallLog.objects.filter(
            conversation_key=str(conversation.pk), status="pending_approval"
        ).order_by("created_at")
    )


def _decide(requests: list[ToolCallLog], staff, conversation: Conversation) -> None:
    done, failing, rejected, _, corrected = requests
    pending_action_approve(action_id=done.pk, user=staff)
    pending_action_execute(action_id=done.pk)
    pending_action_approve(action_id=failing.pk, user=staff)
    with inject_fault("memberships", Fault.STORAGE_FAILURE):
        pending_action_execute(action_id=failing.pk)
    pending_action_reject(action_id=rejected.pk, user=staff, reason="Obras")
    end = datetime.date.fromisoformat(corrected.arguments["end"])
    pending_action_correct(
        action_id=corrected.pk,
        user=staff,
        arguments={**corrected.arguments, "end": str(end - datetime.timedelta(days=2))},
    )
    handoff = handoff_create(
        business=conversation.business,
        member=conversation.member,
        conversation_key=str(conversation.pk),
        cause=Handoff.Cause.NO_ANSWER,
        tried={"tool": "freeze_membership", "arguments": done.arguments},
    )
    handoff_settle(handoff_id=handoff.pk, user=staff, resolution="not_done")


def test_each_member_reads_every_later_notice_in_their_own_language(
    django_capture_on_commit_callbacks,
):
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    staff = StaffRole.objects.get(business=agent.business, role="staff").user
    spanish = Member.objects.get(external_id="socio-1001")
    english = Member.objects.get(external_id="socio-1003")
    assert (spanish.language, english.language, agent.language) == ("es", "en", "es")
    conversations = {
        language: conversation_start(agent=agent, member=member)
        for language, member in (("es", spanish), ("en", english))
    }
    asked = {
        language: _ask_five(conversation, language)
        for language, conversation in conversations.items()
    }
    last_asked = Message.objects.latest("pk").pk

    for language, conversation in conversations.items():
        _decide(asked[language], staff, conversation)
    with django_capture_on_commit_callbacks(execute=True):
        assert pending_actions_expire(now=timezone.now() + datetime.timedelta(days=2))

    for language, conversation in conversations.items():
        told = [
            m.text
            for m in conversation.messages.filter(pk__gt=last_asked).order_by("pk")
            if m.role in ("assistant", "notice")
        ]
        expected = _expected(language)
        read = {
            kind: [text for text in told if re.match(pattern, text)]
            for kind, pattern in expected.items()
        }
        assert {kind: len(texts) for kind, texts in read.items()} == dict.fromkeys(
            expected, 1
        ), (language, told)
        assert len(told) == len(expected), told  # nothing in another language
        # one date format: as people write it, no ISO day, no «Dec. 7»
        for text in told:
            assert not re.search(r"\d{4}-\d{2}-\d{2}", text), text
            assert not re.search(r"\b[A-Za-z]{3,4}\. \d", text), text


def test_the_member_records_language_comes_first_then_the_conversations(db):
    """A member who set English after the conversation began reads English; a
    member without one, the conversation's; without either, the agent's."""
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    member = Member.objects.get(external_id="socio-1002")
    conversation = conversation_start(agent=agent, member=member)
    assert conversation.language == "es"

    member.language = "en"
    assert notice_language(conversation) == "en"
    member.language = ""
    conversation.language = "en"
    assert notice_language(conversation) == "en"
    conversation.language = ""
    assert notice_language(conversation) == agent.language == "es"


def test_a_member_who_set_english_meanwhile_is_told_in_english(db):
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    staff = StaffRole.objects.get(business=agent.business, role="staff").user
    member = Member.objects.get(external_id="socio-1002")
    conversation = conversation_start(agent=agent, member=member)
    _ask(conversation, "es", "agosto", "August")
    request = ToolCallLog.objects.get(conversation_key=str(conversation.pk))
    Member.objects.filter(pk=member.pk).update(language="en")

    pending_action_reject(action_id=request.pk, user=staff, reason="Obras")

    told = conversation.messages.filter(role="notice").latest("pk").text
    assert re.match(_expected("en")["rejected"].replace("October", "August"), told)
    assert Conversation.objects.get(pk=conversation.pk).language == "es"  # as it was
