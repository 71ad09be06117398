"""What the assistant's model steps cost: the tokens each step's provider billed
(on the step's row, ``agents.models.Message``) times the model's prices.

Costs are worked out when read, from the prices as they stand (an owner who
corrects a price sees every step at the corrected price), in ``Decimal``.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum

from agents.models import Message, ModelPrice

MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Price:
    """Per million tokens; ``cache_write`` ``None`` where a write costs input."""

    currency: str
    input: Decimal
    cached_input: Decimal
    cache_write: Decimal | None
    output: Decimal
    #: Where the figures come from: the owner's own, or the list of that date.
    list_date: datetime.date | None = None


#: The providers' list prices in USD per million tokens for the models Gymnasia
#: offers by default, as published on this date (standard tier, prompts under
#: 200,000 tokens; Anthropic's writes to its 5-minute cache).
LIST_PRICES_AS_OF = datetime.date(2026, 12, 5)
LIST_PRICES: dict[str, Price] = {
    "gpt-5-mini": Price(
        "USD", Decimal("0.25"), Decimal("0.025"), None, Decimal("2.00"),
        LIST_PRICES_AS_OF,
    ),
    "claude-sonnet-4-5": Price(
        "USD", Decimal("3.00"), Decimal("0.30"), Decimal("3.75"), Decimal("15.00"),
        LIST_PRICES_AS_OF,
    ),
    "gemini-2.5-flash": Price(
        "USD", Decimal("0.30"), Decimal("0.03"), None, Decimal("2.50"),
        LIST_PRICES_AS_OF,
    ),
}  # fmt: skip


def prices_for(*, business_id: Any) -> dict[str, Price]:
    """Every model's price for the business: its own over the list. One query."""
    own = {
        row.model: Price(
            row.currency, row.input, row.cached_input, row.cache_write, row.output
        )
        for row in ModelPrice.objects.filter(business_id=business_id)
    }
    return {**LIST_PRICES, **own}


@dataclass(frozen=True)
class Tokens:
    input: int = 0
    cached_input: int = 0
    cache_write: int = 0
    output: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.cached_input + other.cached_input,
            self.cache_write + other.cache_write,
            self.output + other.output,
        )


def cost(tokens: Tokens, price: Price | None) -> Decimal | None:
    """What the tokens cost at the price, in its currency: ``None`` (unknown)
    when there is no price for tokens that were billed; zero for no tokens."""
    if tokens == Tokens():
        return Decimal(0)
    if price is None:
        return None
    fresh = tokens.input - tokens.cached_input - tokens.cache_write
    write = price.cache_write if price.cache_write is not None else price.input
    total = (
        fresh * price.input
        + tokens.cached_input * price.cached_input
        + tokens.cache_write * write
        + tokens.output * price.output
    )
    return total / MILLION


@dataclass(frozen=True)
class ModelUsage:
    """One model's steps among some messages, their tokens and what they cost.
    ``unreported`` steps had no usage from their provider: with any of them,
    the cost is unknown."""

    model: str
    steps: int
    unreported: int
    tokens: Tokens
    price: Price | None
    cost: Decimal | None


def usage_by_model(
    messages: QuerySet[Message], *, business_id: Any
) -> list[ModelUsage]:
    """The model steps among ``messages`` (rows that name their model), summed
    per model, most steps first. Two queries."""
    prices = prices_for(business_id=business_id)
    rows = (
        messages.exclude(model="")
        .values("model")
        .annotate(
            steps=Count("pk"),
            unreported=Count("pk", filter=Q(input_tokens__isnull=True)),
            input=Sum("input_tokens", default=0),
            cached_input=Sum("cached_input_tokens", default=0),
            cache_write=Sum("cache_write_tokens", default=0),
            output=Sum("output_tokens", default=0),
        )
        .order_by("-steps", "model")
    )
    found = []
    for row in rows:
        tokens = Tokens(
            row["input"], row["cached_input"], row["cache_write"], row["output"]
        )
        price = prices.get(row["model"])
        found.append(
            ModelUsage(
                model=row["model"],
                steps=row["steps"],
                unreported=row["unreported"],
                tokens=tokens,
                price=price,
                cost=None if row["unreported"] else cost(tokens, price),
            )
        )
    return found
