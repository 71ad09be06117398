"""A gym's history for the Panel's tests: calls, requests and their decisions,
members' messages and model steps, cases, each at a chosen moment."""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone

from agents.conversations import conversation_start
from agents.models import Agent, Conversation, Message
from agents.services import agent_create
from approvals.models import Decision
from gymnasia.gyms.models import Business, Member
from tests.factories import BusinessFactory, MemberFactory, StaffRoleFactory
from tools.models import AgentToolSetting, Handoff, ToolCallLog


@dataclass
class Gym:
    business: Business
    agent: Agent
    member: Member
    conversation: Conversation

    def call(
        self,
        tool: str,
        status: str,
        *,
        at: datetime.datetime | None = None,
        verification: str = "",
        request: bool = False,
        arguments: dict[str, Any] | None = None,
    ) -> ToolCallLog:
        return ToolCallLog.objects.create(
            business=self.business,
            member=self.member,
            conversation_key=str(self.conversation.pk),
            tool_name=tool,
            effect="write",
            status=status,
            verification=verification,
            arguments=arguments or {},
            created_at=at or timezone.now() - datetime.timedelta(hours=1),
            expires_at=timezone.now() + datetime.timedelta(days=1) if request else None,
        )

    def decided(
        self,
        tool: str,
        kind: str,
        *,
        waited: datetime.timedelta = datetime.timedelta(minutes=5),
        amount: Decimal | None = None,
        difference: dict[str, Any] | None = None,
        at: datetime.datetime | None = None,
    ) -> Decision:
        """A request of ``tool`` staff decided after ``waited``."""
        decided_at = at or timezone.now() - datetime.timedelta(minutes=30)
        call = self.call(
            tool,
            kind,
            at=decided_at - waited,
            request=True,
            arguments={"amount": float(amount)} if amount is not None else {},
        )
        corrected_to = None
        if kind == Decision.Kind.SUPERSEDED:
            corrected_to = self.call(
                tool, "pending_approval", at=decided_at, request=True
            )
        return Decision.objects.create(
            business=self.business,
            call=call,
            kind=kind,
            decided_at=decided_at,
            corrected_to=corrected_to,
            difference=difference or {},
        )

    def message(
        self, role: str, *, at: datetime.datetime | None = None, **usage: Any
    ) -> Message:
        return Message.objects.create(
            conversation=self.conversation,
            role=role,
            text=role,
            created_at=at or timezone.now() - datetime.timedelta(hours=1),
            **usage,
        )

    def gate(self, tool: str) -> AgentToolSetting:
        return AgentToolSetting.objects.create(
            agent=self.agent,
            tool_name=tool,
            enabled=True,
            mode=AgentToolSetting.Mode.APPROVAL,
        )

    def handoff(self, *, resolved: bool = False) -> Handoff:
        return Handoff.objects.create(
            business=self.business,
            conversation_key=str(self.conversation.pk),
            status="resolved" if resolved else "open",
            resolved_at=timezone.now() if resolved else None,
        )

    def person(self, role: str) -> Any:
        return StaffRoleFactory(business=self.business, role=role).user


def gym_built(name: str, *, zone: str = "Europe/Madrid") -> Gym:
    business = BusinessFactory(name=name, time_zone=zone)
    agent = agent_create(business=business, name=f"{name} assistant")
    member = MemberFactory(business=business, name=f"{name} member")
    conversation = conversation_start(agent=agent, member=member)
    return Gym(business, agent, member, conversation)


def new_key() -> str:
    return str(uuid.uuid4())
