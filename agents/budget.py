"""An agent's monthly budget: what its model cost this calendar month (in the
gym's time zone), in tokens and in money, against the owner's limits.

A turn reads the month's spend once, when it starts (only for an agent with a
budget), and adds each of its own steps as they come: a provider is never asked
once the budget is used up. Turns of other conversations running at the same time
are not seen by each other, so a month may end a few steps over: the limit stops
the next turn, never a step mid-way.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Count, Q, Sum
from django.utils import timezone

from agents.models import Agent, Message
from agents.providers.base import Usage
from agents.usage import Price, Tokens, cost, prices_for
from gymnasia.gyms.models import Business

#: The share of a budget at which the owners are warned.
WARN_AT = Decimal("0.8")


@dataclass(frozen=True)
class Spend:
    """Tokens (input and output) and money (in the budget's currency) used;
    ``uncounted``: models whose steps could not be priced in that currency (no
    price, another currency, or no usage reported), which the money leaves out."""

    tokens: int = 0
    money: Decimal = Decimal(0)
    uncounted: frozenset[str] = field(default_factory=frozenset)

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.tokens + other.tokens,
            self.money + other.money,
            self.uncounted | other.uncounted,
        )


@dataclass(frozen=True)
class Budget:
    money: Decimal | None
    currency: str
    tokens: int | None
    prices: dict[str, Price]

    @classmethod
    def of(cls, agent: Agent, prices: dict[str, Price] | None = None) -> Budget | None:
        """The agent's budget, or ``None`` when it has no limit. One query, none
        when the business's ``prices`` are given."""
        if agent.monthly_budget is None and agent.monthly_token_budget is None:
            return None
        return cls(
            money=agent.monthly_budget,
            currency=agent.monthly_budget_currency,
            tokens=agent.monthly_token_budget,
            prices=prices_for(business_id=agent.business_id)
            if prices is None
            else prices,
        )

    def spend(self, model: str, tokens: Tokens | None) -> Spend:
        """What steps of ``model`` with these tokens (``None``: not reported) count."""
        if tokens is None:
            return Spend(uncounted=frozenset({model}))
        price = self.prices.get(model)
        money = (
            cost(tokens, price) if price and price.currency == self.currency else None
        )
        if money is None and tokens != Tokens():
            return Spend(tokens.input + tokens.output, uncounted=frozenset({model}))
        return Spend(tokens.input + tokens.output, money or Decimal(0))

    def step_spend(self, model: str, usage: Usage | None) -> Spend:
        if usage is None:
            return self.spend(model, None)
        return self.spend(
            model,
            Tokens(
                usage.input_tokens,
                usage.cached_input_tokens,
                usage.cache_write_tokens,
                usage.output_tokens,
            ),
        )

    def share(self, spent: Spend) -> Decimal:
        """How much of the budget is used: the larger of its two limits' shares."""
        shares = [Decimal(0)]
        if self.money is not None:
            shares.append(spent.money / self.money if self.money else Decimal(1))
        if self.tokens is not None:
            shares.append(
                Decimal(spent.tokens) / self.tokens if self.tokens else Decimal(1)
            )
        return max(shares)


def month_start(
    business: Business, now: datetime.datetime | None = None
) -> datetime.datetime:
    """The first moment of this calendar month where the gym is."""
    local = timezone.localtime(now or timezone.now(), business.zone)
    return local.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def month_spend(agent: Agent, budget: Budget) -> Spend:
    """What the agent's model steps used this month. One query."""
    rows = (
        Message.objects.filter(
            conversation__agent=agent,
            created_at__gte=month_start(agent.business),
        )
        .exclude(model="")
        .values("model")
        .annotate(
            unreported=Count("pk", filter=Q(input_tokens__isnull=True)),
            input=Sum("input_tokens", default=0),
            cached_input=Sum("cached_input_tokens", default=0),
            cache_write=Sum("cache_write_tokens", default=0),
            output=Sum("output_tokens", default=0),
        )
    )
    spent = Spend()
    for row in rows:
        tokens = Tokens(
            row["input"], row["cached_input"], row["cache_write"], row["output"]
        )
        spent += budget.spend(row["model"], tokens)
        if row["unreported"]:
            spent += budget.spend(row["model"], None)
    return spent


@dataclass(frozen=True)
class BudgetState:
    """An agent's month so far, for its owners."""

    budget: Budget
    spent: Spend
    share: Decimal

    @property
    def warned(self) -> bool:
        return self.share >= WARN_AT

    @property
    def reached(self) -> bool:
        return self.share >= 1


def budget_state(
    agent: Agent, prices: dict[str, Price] | None = None
) -> BudgetState | None:
    budget = Budget.of(agent, prices)
    if budget is None:
        return None
    spent = month_spend(agent, budget)
    return BudgetState(budget, spent, budget.share(spent))
