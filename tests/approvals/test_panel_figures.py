"""The Panel's figures, counted exactly on a small history: outcomes per tool,
days in the gym's time zone at a day's boundary, waits for a decision, tokens
and their cost."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from agents.usage import LIST_PRICES, Tokens, cost, prices_for
from approvals.models import Decision
from approvals.panel.figures import (
    Period,
    calls_by_tool,
    conversations_per_day,
    days_of_messages,
    decisions_by_tool,
    handoffs_counted,
    percentile,
)
from tests.approvals.panel_kit import gym_built

pytestmark = pytest.mark.django_db
UTC = datetime.UTC


def test_calls_by_tool_counts_each_outcome():
    """Each status lands in its outcome; waiting requests in none of them."""
    gym = gym_built("Norte")
    for status in ("ok", "ok", "no_results", "failed", "unavailable", "not_found"):
        gym.call("search_foods", status)
    gym.call("book_class", "unknown_outcome", verification="unverifiable")
    gym.call("book_class", "ok", verification="unverifiable")
    gym.call("book_class", "invalid_arguments")
    gym.call("book_class", "unknown_tool")
    gym.call("book_class", "duplicate")
    gym.call("book_class", "pending_approval", request=True)

    found = calls_by_tool(Period.of(gym.business, 7))

    assert found["search_foods"].outcomes == {
        "succeeded": 3,
        "failed": 3,
        "unknown": 0,
        "refused": 0,
        "duplicate": 0,
    }
    book = found["book_class"]
    assert book.outcomes == {
        "succeeded": 1,
        "failed": 0,
        "unknown": 1,
        "refused": 2,
        "duplicate": 1,
    }
    assert (book.requests, book.unverifiable) == (1, 2)


def test_days_are_the_gym_s_at_midnight():
    """23:30 UTC on 9 March is 00:30 on the 10th in Madrid: the 10th's."""
    gym = gym_built("Madrid")
    late = datetime.datetime(2026, 3, 9, 23, 30, tzinfo=UTC)
    early = datetime.datetime(2026, 3, 9, 22, 30, tzinfo=UTC)  # 23:30 on the 9th
    gym.conversation.created_at = late
    gym.conversation.save()
    gym.message("member", at=late)
    gym.message("member", at=early)
    now = datetime.datetime(2026, 3, 12, 10, 0, tzinfo=UTC)

    period = Period.of(gym.business, 7, now=now)

    assert period.first == datetime.date(2026, 3, 6)
    assert conversations_per_day(period) == {datetime.date(2026, 3, 10): 1}
    days = days_of_messages(period, {})
    assert days[datetime.date(2026, 3, 10)].turns == 1
    assert days[datetime.date(2026, 3, 9)].turns == 1


def test_a_row_before_the_period_is_left_out():
    gym = gym_built("Sur")
    now = datetime.datetime(2026, 3, 12, 10, 0, tzinfo=UTC)
    # 23:59 on 5 March in Madrid: the day before a 7-day period's first.
    gym.call("search_foods", "ok", at=datetime.datetime(2026, 3, 5, 22, 59, tzinfo=UTC))
    gym.call("search_foods", "ok", at=datetime.datetime(2026, 3, 5, 23, 0, tzinfo=UTC))

    found = calls_by_tool(Period.of(gym.business, 7, now=now))

    assert found["search_foods"].outcomes["succeeded"] == 1


def test_decisions_by_tool_counts_kinds_and_waits():
    """Median and 90th percentile of staff's waits, interpolated as
    PostgreSQL's percentile_cont; an expiry is nobody's wait."""
    gym = gym_built("Este")
    for minutes in (1, 2, 3, 4):
        gym.decided(
            "refund_payment", "approved", waited=datetime.timedelta(minutes=minutes)
        )
    gym.decided("refund_payment", "rejected", waited=datetime.timedelta(minutes=10))
    gym.decided("refund_payment", "expired", waited=datetime.timedelta(days=1))
    correction = gym.decided(
        "refund_payment", "superseded", waited=datetime.timedelta(minutes=10)
    )
    # The correction approved: not an approval "unchanged".
    Decision.objects.create(
        business=gym.business,
        call=correction.corrected_to,
        kind="approved",
        decided_at=correction.decided_at + datetime.timedelta(minutes=1),
    )

    found = decisions_by_tool(Period.of(gym.business, 30))["refund_payment"]

    assert (found.approved_unchanged, found.corrected) == (4, 1)
    assert (found.rejected, found.expired) == (1, 1)
    waits = sorted(found.waits)
    assert waits == [60, 60, 120, 180, 240, 600, 600]
    assert found.median == 180
    assert found.p90 == pytest.approx(600)
    assert percentile([60, 120, 180, 240, 600], 0.9) == pytest.approx(456)


def test_tokens_and_cost_per_day_use_the_usage_prices():
    gym = gym_built("Oeste")
    gym.message("member")
    gym.message(
        "step",
        model="gpt-5-mini",
        input_tokens=1000,
        cached_input_tokens=400,
        output_tokens=200,
    )
    gym.message("assistant", model="gpt-5-mini", input_tokens=500, output_tokens=50)
    gym.message("step", model="homemade", input_tokens=10, output_tokens=1)

    period = Period.of(gym.business, 7)
    days = days_of_messages(period, prices_for(business_id=gym.business.pk))

    (day,) = days.values()
    assert (day.turns, day.steps) == (1, 3)
    assert day.tokens == Tokens(1510, 400, 0, 251)
    expected = cost(Tokens(1500, 400, 0, 250), LIST_PRICES["gpt-5-mini"])
    assert day.costs == {"USD": expected}
    assert expected > Decimal(0)
    assert day.unpriced == {"homemade"}


def test_handoffs_opened_and_resolved():
    gym = gym_built("Centro")
    gym.handoff()
    gym.handoff(resolved=True)

    assert handoffs_counted(Period.of(gym.business, 7)) == {"opened": 2, "resolved": 1}
