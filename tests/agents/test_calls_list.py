"""The calls' list in admin names each call's conversation by its member and
start, linked to its page, never by its id; one query names a whole page."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.conversations import conversation_start
from agents.models import Agent, Conversation
from agents.turn import turn_run
from gymnasia.gyms.models import Member
from tests.agents.admin_kit import owner_signed_in

pytestmark = pytest.mark.django_db
CALLS = "/admin/tools/toolcalllog/"


owner = pytest.fixture(owner_signed_in)


def _talk(text: str) -> None:
    agent = Agent.objects.get()
    member = Member.objects.get(external_id="socio-1001")
    conversation = conversation_start(agent=agent, member=member)
    async_to_sync(turn_run)(conversation, text)


def test_a_calls_conversation_is_named_by_its_member_and_start(owner):
    _talk("¿Cuántos carbohidratos tiene el arroz?")
    key = Conversation.objects.get().pk

    page = owner.get(CALLS).content.decode()

    named = re.findall(
        rf'<a href="/admin/agents/conversation/{key}/change/">([^<]+)</a>', page
    )
    assert named and all(
        re.fullmatch(r"Lucía Romero · \w+ \d+ de \w+( de \d{4})?, \d{2}:\d{2}", n)
        for n in named
    ), named
    assert f">{key}<" not in page
    assert ">Socio<" not in page  # the member is named in the conversation


def test_naming_the_conversations_costs_one_query_whatever_their_number(owner):
    _talk("¿Cuántos carbohidratos tiene el arroz?")
    with CaptureQueriesContext(connection) as one:
        owner.get(CALLS)
    for _ in range(3):
        _talk("¿Cuántos carbohidratos tiene el arroz?")

    with CaptureQueriesContext(connection) as four:
        owner.get(CALLS)

    assert len(four) == len(one)
