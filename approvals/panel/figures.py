"""The Panel's figures for one gym and one period: each computed in the database
(grouped by day in the gym's time zone, or by tool), one query a figure.

Costs are the tokens times the prices through ``agents.usage`` (the conversation
page's and the budget's own functions): one truth for what the model costs.
"""

from __future__ import annotations

import datetime
import statistics
import zoneinfo
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeVar

from django.db.models import Count, Model, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from agents.models import Conversation, Message
from agents.usage import Price, Tokens, cost
from approvals.models import Decision
from gymnasia.gyms.models import Business
from tools.models import Handoff, ToolCallLog
from tools.presentation import CALL_OUTCOMES

#: The periods an owner may choose, in days.
PERIODS = (7, 30, 90)
M = TypeVar("M", bound=Model)
STATUS_OUTCOME = {
    status: outcome
    for outcome, statuses in CALL_OUTCOMES.items()
    for status in statuses
}


@dataclass(frozen=True)
class Period:
    """The last ``days`` calendar days where the gym is, today included:
    from the first one's midnight to the next midnight after today."""

    business: Business
    days: int
    zone: zoneinfo.ZoneInfo
    first: datetime.date
    start: datetime.datetime
    end: datetime.datetime

    @classmethod
    def of(
        cls, business: Business, days: int, now: datetime.datetime | None = None
    ) -> Period:
        zone = business.zone
        today = timezone.localtime(now or timezone.now(), zone).date()
        first = today - datetime.timedelta(days=days - 1)
        return cls(
            business=business,
            days=days,
            zone=zone,
            first=first,
            start=_midnight(first, zone),
            end=_midnight(today + datetime.timedelta(days=1), zone),
        )

    def rows(self, model: type[M], when: str = "created_at") -> QuerySet[M]:
        """The gym's rows of ``model`` whose ``when`` falls in the period."""
        return model._default_manager.filter(
            business=self.business,
            **{f"{when}__gte": self.start, f"{when}__lt": self.end},
        ).order_by()

    def dates(self) -> list[datetime.date]:
        return [self.first + datetime.timedelta(days=n) for n in range(self.days)]

    def day_bounds(
        self, day: datetime.date
    ) -> tuple[datetime.datetime, datetime.datetime]:
        return _midnight(day, self.zone), _midnight(
            day + datetime.timedelta(days=1), self.zone
        )


def _midnight(day: datetime.date, zone: zoneinfo.ZoneInfo) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time(), tzinfo=zone)


def conversations_per_day(period: Period) -> dict[datetime.date, int]:
    """New conversations each day. One query."""
    rows = (
        period.rows(Conversation)
        .annotate(day=TruncDate("created_at", tzinfo=period.zone))
        .values("day")
        .annotate(count=Count("pk"))
    )
    return {row["day"]: row["count"] for row in rows}


@dataclass
class Day:
    """One day of the assistant's work: members' turns, its model steps, their
    tokens and what they cost per currency (``unpriced``: models whose steps
    could not be priced, so the day's cost leaves them out)."""

    turns: int = 0
    steps: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    costs: dict[str, Decimal] = field(default_factory=dict)
    unpriced: set[str] = field(default_factory=set)


def days_of_messages(
    period: Period, prices: dict[str, Price]
) -> dict[datetime.date, Day]:
    """Each day's member turns, model steps, tokens and cost. One query, grouped
    by day and model (a member's message has no model)."""
    rows = (
        Message.objects.filter(
            conversation__business=period.business,
            created_at__gte=period.start,
            created_at__lt=period.end,
        )
        .filter(Q(role=Message.Role.MEMBER) | ~Q(model=""))
        .annotate(day=TruncDate("created_at", tzinfo=period.zone))
        .order_by()
        .values("day", "model")
        .annotate(
            # Counted by columns the index holds (``message_panel``), not by id.
            turns=Count("role", filter=Q(role=Message.Role.MEMBER)),
            steps=Count("model", filter=~Q(model="")),
            unreported=Count(
                "model", filter=Q(input_tokens__isnull=True) & ~Q(model="")
            ),
            input=Sum("input_tokens", default=0),
            cached_input=Sum("cached_input_tokens", default=0),
            cache_write=Sum("cache_write_tokens", default=0),
            output=Sum("output_tokens", default=0),
        )
    )
    days: dict[datetime.date, Day] = defaultdict(Day)
    for row in rows:
        day = days[row["day"]]
        day.turns += row["turns"]
        if not row["model"]:
            continue
        tokens = Tokens(
            row["input"], row["cached_input"], row["cache_write"], row["output"]
        )
        day.steps += row["steps"]
        day.tokens += tokens
        price = prices.get(row["model"])
        money = None if row["unreported"] else cost(tokens, price)
        if money is None or price is None:
            if money is None:
                day.unpriced.add(row["model"])
            continue
        day.costs[price.currency] = day.costs.get(price.currency, Decimal(0)) + money
    return dict(days)


@dataclass
class ToolCalls:
    """One tool's calls in the period: how many ended in each outcome, how many
    were requests (waited for staff), and its writes that could not be verified."""

    outcomes: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(CALL_OUTCOMES, 0)
    )
    requests: int = 0
    unverifiable: int = 0


def calls_by_tool(period: Period) -> dict[str, ToolCalls]:
    """The period's calls per tool. One query (an index-only scan on PostgreSQL,
    ``toolcalllog_business``)."""
    rows = (
        period.rows(ToolCallLog)
        .values("tool_name", "status")
        .annotate(
            # Counted by columns the index holds, not by id: a request is a
            # call with an expiry (``COUNT`` leaves out the others' NULL).
            count=Count("*"),
            requests=Count("expires_at"),
            unverifiable=Count("verification", filter=Q(verification="unverifiable")),
        )
    )
    tools: dict[str, ToolCalls] = defaultdict(ToolCalls)
    for row in rows:
        calls = tools[row["tool_name"]]
        outcome = STATUS_OUTCOME.get(row["status"])
        if outcome:
            calls.outcomes[outcome] += row["count"]
        calls.requests += row["requests"]
        calls.unverifiable += row["unverifiable"]
    return dict(sorted(tools.items()))


@dataclass
class ToolDecisions:
    """What staff made of one tool's requests, decided in the period, and how
    long each took from the request to the decision (staff's decisions only:
    an expiry is nobody's)."""

    approved_unchanged: int = 0
    corrected: int = 0
    rejected: int = 0
    expired: int = 0
    waits: list[float] = field(default_factory=list)

    @property
    def median(self) -> float | None:
        return statistics.median(self.waits) if self.waits else None

    @property
    def p90(self) -> float | None:
        return percentile(self.waits, 0.9)


def percentile(values: list[float], share: float) -> float | None:
    """The value below which ``share`` of them lie, interpolated between the two
    nearest (PostgreSQL's ``percentile_cont``)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * share
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def decisions_by_tool(period: Period) -> dict[str, ToolDecisions]:
    """The period's decisions per tool, with each one's wait in seconds. One
    query; a gym's decisions are few beside its calls."""
    rows = (
        period.rows(Decision, "decided_at")
        # ``call__corrects``: the decision a correction was made by, if any.
        .values_list(
            "call__tool_name",
            "kind",
            "decided_at",
            "call__created_at",
            "call__corrects",
        )
    )
    tools: dict[str, ToolDecisions] = defaultdict(ToolDecisions)
    for tool, kind, decided_at, asked_at, correction in rows:
        found = tools[tool]
        if kind == Decision.Kind.APPROVED and not correction:
            found.approved_unchanged += 1
        elif kind == Decision.Kind.SUPERSEDED:
            found.corrected += 1
        elif kind == Decision.Kind.REJECTED:
            found.rejected += 1
        elif kind == Decision.Kind.EXPIRED:
            found.expired += 1
        if kind != Decision.Kind.EXPIRED:
            found.waits.append((decided_at - asked_at).total_seconds())
    return dict(sorted(tools.items()))


def handoffs_counted(period: Period) -> dict[str, int]:
    """Cases opened, and cases resolved, in the period. One query."""
    opened = Q(created_at__gte=period.start, created_at__lt=period.end)
    resolved = Q(resolved_at__gte=period.start, resolved_at__lt=period.end)
    return Handoff.objects.filter(business=period.business).aggregate(
        opened=Count("pk", filter=opened), resolved=Count("pk", filter=resolved)
    )
