"""Readiness for automatic: for each tool an agent keeps behind approval, what
staff made of its last requests; after enough approvals unchanged and no
rejection, the Panel suggests letting it run automatically up to the largest
amount staff approved, and an owner switches it in one step.

"Automatic up to an amount" is the tool setting's own ``auto_limit`` (amounts
up to it run without approval, larger ones still wait: ``tools.selection``); a
tool without an amount becomes automatic.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from agents.models import Conversation
from approvals.models import Decision
from gymnasia.errors import InvalidValue, NotFound
from gymnasia.gyms.models import Business
from tools.models import AgentToolSetting, ToolCallLog
from tools.presentation import tool_title
from tools.registry import published_registry

#: Approvals unchanged, with no rejection, before automatic is suggested.
SUGGEST_AFTER = 20
#: How many of a tool's latest decisions are read.
LAST_DECISIONS = 50
DECIDED_BY_STAFF = (
    Decision.Kind.APPROVED,
    Decision.Kind.SUPERSEDED,
    Decision.Kind.REJECTED,
)


@dataclass
class Readiness:
    """One gated tool of one agent, over its last decisions by staff."""

    setting: AgentToolSetting
    amount_argument: str | None
    approved_unchanged: int = 0
    corrected: int = 0
    rejected: int = 0
    #: How staff corrected it: each argument, and how many times it changed.
    corrections: Counter[str] = field(default_factory=Counter)
    largest: Decimal | None = None

    @property
    def corrected_how(self) -> list[tuple[str, int]]:
        """Each argument staff corrected, most often first (a template cannot
        ask a ``Counter``: its lookups find a count of 0 first)."""
        return self.corrections.most_common()

    @property
    def title(self) -> str:
        return tool_title(self.setting.tool_name)

    @property
    def suggested(self) -> bool:
        """Automatic is suggested: enough approvals unchanged, no rejection, and
        a step beyond what the setting already runs without staff."""
        if self.approved_unchanged < SUGGEST_AFTER or self.rejected:
            return False
        if self.amount_argument is None:
            return self.setting.mode == AgentToolSetting.Mode.APPROVAL
        limit = self.suggested_limit
        current = self.setting.auto_limit
        return limit is not None and (current is None or limit > current)

    @property
    def suggested_limit(self) -> Decimal | None:
        """The largest amount approved unchanged, within the owner's maximum."""
        if self.largest is None:
            return None
        maximum = self.setting.max_amount
        return self.largest if maximum is None else min(self.largest, maximum)


def _amount(arguments: Any, name: str | None) -> Decimal | None:
    if name is None or not isinstance(arguments, dict):
        return None
    try:
        return Decimal(str(arguments.get(name)))
    except (InvalidOperation, ValueError):
        return None


def _gated_settings(business: Business) -> list[AgentToolSetting]:
    return list(
        AgentToolSetting.objects.filter(
            agent__business=business,
            enabled=True,
            mode=AgentToolSetting.Mode.APPROVAL,
        )
        .select_related("agent")
        .order_by("agent__name", "tool_name")
    )


def _agents_of(business: Business, keys: set[str]) -> dict[str, int]:
    """Each conversation's agent, by the key its calls record. One query."""
    ids = set()
    for key in keys:
        try:
            ids.add(uuid.UUID(key))
        except ValueError:
            continue
    rows = Conversation.objects.filter(business=business, pk__in=ids).values_list(
        "pk", "agent_id"
    )
    return {str(pk): agent_id for pk, agent_id in rows}


def readiness_for(
    business: Business, settings: list[AgentToolSetting] | None = None
) -> list[Readiness]:
    """Every gated tool of the gym's agents, with its last decisions. Two
    queries, three when one tool is gated at several agents (its decisions are
    then told apart by their conversation's agent)."""
    if settings is None:
        settings = _gated_settings(business)
    if not settings:
        return []
    registry = published_registry()
    found = {}
    for setting in settings:
        declared = registry.get(setting.tool_name)
        amount = declared.declaration.amount_argument if declared else None
        found[(setting.agent_id, setting.tool_name)] = Readiness(setting, amount)
    # From the requests' side: a gym's requests by time are an index of their
    # own (``toolcalllog_requests``), few beside its calls; its decisions by
    # time, joined to their calls' tools, were each a look into the log.
    rows = list(
        ToolCallLog.objects.filter(
            business=business,
            expires_at__isnull=False,
            tool_name__in={s.tool_name for s in settings},
            decision__kind__in=DECIDED_BY_STAFF,
        )
        .order_by("-created_at")
        .values_list(
            "tool_name",
            "conversation_key",
            "decision__kind",
            "arguments",
            "decision__difference",
            "corrects",
        )[: LAST_DECISIONS * len(settings)]
    )
    agents_by_tool: dict[str, set[int]] = defaultdict(set)
    for at_agent, tool_name in found:
        agents_by_tool[tool_name].add(at_agent)
    shared = any(len(agents) > 1 for agents in agents_by_tool.values())
    agent_of = _agents_of(business, {row[1] for row in rows}) if shared else {}
    seen: Counter[tuple[int | None, str]] = Counter()
    for tool, key, kind, arguments, difference, correction in rows:
        agents = agents_by_tool[tool]
        agent_id: int | None = (
            agent_of.get(key) if len(agents) > 1 else next(iter(agents))
        )
        one = found.get((agent_id, tool)) if agent_id is not None else None
        if one is None or seen[(agent_id, tool)] >= LAST_DECISIONS:
            continue
        seen[(agent_id, tool)] += 1
        _count(one, kind, arguments, difference or {}, bool(correction))
    return list(found.values())


def _count(
    one: Readiness,
    kind: str,
    arguments: Any,
    difference: dict[str, Any],
    correction: bool,
) -> None:
    if kind == Decision.Kind.REJECTED:
        one.rejected += 1
    elif kind == Decision.Kind.SUPERSEDED:
        one.corrected += 1
        one.corrections.update(difference.keys())
    elif not correction:
        one.approved_unchanged += 1
        amount = _amount(arguments, one.amount_argument)
        if amount is not None and (one.largest is None or amount > one.largest):
            one.largest = amount


def tool_automatic_switch(
    *, business: Business, setting_id: int, user: AbstractBaseUser
) -> Readiness:
    """Let a gated tool run automatically as its readiness suggests (up to the
    largest amount approved unchanged), recorded in the agent's admin history.
    The readiness is read again under the setting's lock: a rejection since the
    page was shown, or a switch already made, changes nothing."""
    with transaction.atomic():
        setting = (
            AgentToolSetting.objects.select_for_update()
            .select_related("agent")
            .filter(agent__business=business, pk=setting_id)
            .first()
        )
        if setting is None:
            raise NotFound(_("No such tool setting."))
        ready = readiness_for(business, [setting])[0]
        if setting.mode != AgentToolSetting.Mode.APPROVAL or not ready.suggested:
            raise InvalidValue(
                _("Nothing was changed: automatic is not suggested for this tool.")
            )
        changed = _switched(setting, ready)
        LogEntry.objects.log_actions(
            user_id=user.pk,
            queryset=[setting.agent],
            action_flag=CHANGE,
            change_message=[
                {
                    "changed": {
                        "name": str(AgentToolSetting._meta.verbose_name),
                        "object": str(setting),
                        "fields": changed,
                    }
                }
            ],
            single_object=True,
        )
    return ready


def _switched(setting: AgentToolSetting, ready: Readiness) -> list[str]:
    if ready.amount_argument is None:
        setting.mode = AgentToolSetting.Mode.AUTOMATIC
        setting.save(update_fields=["mode"])
        return [str(AgentToolSetting._meta.get_field("mode").verbose_name)]
    setting.auto_limit = ready.suggested_limit
    setting.save(update_fields=["auto_limit"])
    return [str(AgentToolSetting._meta.get_field("auto_limit").verbose_name)]
