"""The three filters (R3): which tools an agent offers the model in a turn.

``offered_tools(agent, member)`` is the one place they are applied, in order:

1. the business has connected the integration the tool needs, and it is healthy
   (for a kind the gym's own software serves, that software: a Mindbody whose
   credentials were refused hides the tools it serves);
2. this agent has the tool enabled;
3. the owner's mode: automatic, or behind staff approval (with the amount limits);

and a tool that needs a verified member is not offered to an anonymous visitor.
It makes two SQL queries however many tools, integrations and settings exist.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext_lazy as _

from gymnasia.gyms.models import Member
from tools.integrations.mindbody import STAYS_BUILT_IN
from tools.integrations.sources import BUILT_IN, tool_source, vendor_serving
from tools.models import AgentToolSetting, Integration
from tools.registry import ToolRegistry, published_registry
from tools.types import Mode, ToolSpec

INTEGRATION_NOT_CONNECTED = "integration_not_connected"
INTEGRATION_FAILING = "integration_failing"
DISABLED = "disabled"
NEEDS_MEMBER = "needs_member"

REASONS = {
    INTEGRATION_NOT_CONNECTED: _("integration not connected"),
    INTEGRATION_FAILING: _("integration failing"),
    DISABLED: _("disabled for this agent"),
    NEEDS_MEMBER: _("needs a verified member"),
}


@dataclass(frozen=True)
class ToolPolicy:
    """How an offered tool runs: automatically, or behind staff approval; for tools
    with an amount, automatic up to ``auto_limit`` and never above ``max_amount``."""

    mode: Mode
    auto_limit: Decimal | None = None
    max_amount: Decimal | None = None
    #: How long a call behind approval waits for staff before it expires.
    approval_valid_for: datetime.timedelta = datetime.timedelta(hours=24)

    def gated_for(self, amount: Decimal | None) -> bool:
        if self.mode != "gated":
            return False
        return not (
            amount is not None
            and self.auto_limit is not None
            and amount <= self.auto_limit
        )


@dataclass(frozen=True)
class ToolSelection:
    offered: dict[str, ToolPolicy] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)
    registry: ToolRegistry | None = None
    #: Where each tool acts: ``built_in``, or the gym's own software serving it.
    sources: dict[str, str] = field(default_factory=dict)
    #: Why a tool of a kind the gym's software serves stays built in.
    notes: dict[str, str] = field(default_factory=dict)

    def specs(self) -> list[ToolSpec]:
        registry = self.registry or published_registry()
        return [tool.spec() for tool in registry if tool.name in self.offered]

    def offers_write(self, name: str) -> bool:
        """Whether ``name`` is an offered tool that changes data."""
        tool = (self.registry or published_registry()).get(name)
        return name in self.offered and tool is not None and tool.is_write


def offered_tools(
    agent: Any, member: Member | None, *, registry: ToolRegistry | None = None
) -> ToolSelection:
    """The tools this agent offers to this member (``None``: an anonymous visitor),
    each with its policy, and every other tool with the reason it is hidden."""
    registry = registry or published_registry()
    # Read into dicts: no ordering (the models' own joins the business's table).
    rows = {
        kind: (status, config)
        for kind, status, config in Integration.objects.filter(
            business_id=agent.business_id
        )
        .order_by()
        .values_list("kind", "status", "config")
    }
    settings = {
        s.tool_name: s
        for s in AgentToolSetting.objects.filter(agent_id=agent.pk).order_by()
    }
    selection = ToolSelection(registry=registry)
    for tool in registry:
        # A kind the gym's own software serves is as healthy as that software.
        source = tool_source(tool.name, tool.integration, rows)
        selection.sources[tool.name] = source
        if source == BUILT_IN and vendor_serving(tool.integration, rows):
            selection.notes[tool.name] = str(STAYS_BUILT_IN.get(tool.name, ""))
        served_by = tool.integration if source == BUILT_IN else source
        status = rows.get(served_by, ("", {}))[0] if served_by else "connected"
        setting = settings.get(tool.name)
        if status == Integration.Status.FAILING:
            selection.excluded[tool.name] = INTEGRATION_FAILING
        elif status != Integration.Status.CONNECTED:
            selection.excluded[tool.name] = INTEGRATION_NOT_CONNECTED
        elif setting is None or not setting.enabled:
            selection.excluded[tool.name] = DISABLED
        elif tool.needs_member and member is None:
            selection.excluded[tool.name] = NEEDS_MEMBER
        else:
            selection.offered[tool.name] = ToolPolicy(
                mode="gated"
                if setting.mode == AgentToolSetting.Mode.APPROVAL
                else "auto",
                auto_limit=setting.auto_limit
                if tool.declaration.amount_argument
                else None,
                max_amount=setting.max_amount
                if tool.declaration.amount_argument
                else None,
                approval_valid_for=datetime.timedelta(
                    minutes=setting.approval_valid_minutes
                ),
            )
    return selection


def default_mode(*, effect: str, amount_argument: str | None) -> str:
    """Reads default to automatic; writes and money to requires-approval."""
    if effect == "read" and amount_argument is None:
        return AgentToolSetting.Mode.AUTOMATIC
    return AgentToolSetting.Mode.APPROVAL
