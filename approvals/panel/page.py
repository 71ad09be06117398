"""The Panel's page for one gym and period: its figures (``figures``), as charts
(``charts``) and tables, each number a link to the admin list it counts, with
the same filters (the gym, the period, the tool, the outcome)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from django.utils.translation import gettext as _

from agents.budget import BudgetState, budget_state
from agents.models import Agent
from agents.services import provider_missing_key
from agents.usage import prices_for
from approvals.panel import charts
from approvals.panel.figures import (
    Day,
    Period,
    ToolDecisions,
    calls_by_tool,
    conversations_per_day,
    days_of_messages,
    decisions_by_tool,
    handoffs_counted,
)
from approvals.panel.readiness import LAST_DECISIONS, SUGGEST_AFTER, readiness_for
from tools.presentation import OUTCOME_LABELS, tool_title


@dataclass(frozen=True)
class Figure:
    """A number and the list behind it."""

    value: int
    link: str


def listed(model: str, period: Period, when: str = "created_at", **filters: Any) -> str:
    """The admin list of ``model`` (``app_model``) for the gym and the period."""
    return _listed(model, period.business.pk, when, period.start, period.end, filters)


def _listed(
    model: str,
    business_id: int,
    when: str,
    start: datetime.datetime,
    end: datetime.datetime,
    filters: dict[str, Any],
) -> str:
    query = {
        "business": business_id,
        f"{when}__gte": start.isoformat(),
        f"{when}__lt": end.isoformat(),
        **filters,
    }
    return f"{reverse(f'admin:{model}_changelist')}?{urlencode(query)}"


def _day_link(model: str, period: Period, day: datetime.date, **filters: Any) -> str:
    start, end = period.day_bounds(day)
    return _listed(model, period.business.pk, "created_at", start, end, filters)


#: The messages a day's members' turns and model steps (with their tokens) are:
#: their links list the conversations that had them that day.
MEMBER_TURN = {"messages__role": "member"}
MODEL_STEP = {"messages__role__in": "step,assistant", "messages__model__gt": ""}


def _messages_link(period: Period, day: datetime.date, kind: dict[str, str]) -> str:
    start, end = period.day_bounds(day)
    return _listed(
        "agents_conversation",
        period.business.pk,
        "messages__created_at",
        start,
        end,
        kind,
    )


def wait_words(seconds: float | None) -> str:
    """A wait as people say it: minutes, or hours and minutes."""
    if seconds is None:
        return "—"
    minutes = round(seconds / 60)
    if minutes < 60:
        return _("%(minutes)s min") % {"minutes": minutes}
    return _("%(hours)s h %(minutes)s min") % {
        "hours": minutes // 60,
        "minutes": minutes % 60,
    }


def _activity(period: Period, days: dict[datetime.date, Day]) -> dict[str, Any]:
    """Conversations, member turns, tokens and cost per day, and their charts."""
    conversations = conversations_per_day(period)
    dates = period.dates()
    names = charts.day_names(dates)
    conversation_links = [
        _day_link("agents_conversation", period, day) for day in dates
    ]
    turn_links = [_messages_link(period, day, MEMBER_TURN) for day in dates]
    step_links = [_messages_link(period, day, MODEL_STEP) for day in dates]
    empty = Day()
    each = [days.get(day, empty) for day in dates]
    return {
        "dates": dates,
        "conversations": [conversations.get(day, 0) for day in dates],
        "conversation_links": conversation_links,
        "turn_links": turn_links,
        "step_links": step_links,
        "each": each,
        "chart": charts.columns_chart(
            _("Conversations and members' turns per day"),
            names,
            [
                charts.Series(
                    _("conversations"),
                    "s1",
                    [conversations.get(day, 0) for day in dates],
                    conversation_links,
                ),
                charts.Series(
                    _("members' turns"), "s2", [d.turns for d in each], turn_links
                ),
            ],
        ),
        "tokens_chart": charts.columns_chart(
            _("Tokens per day"),
            names,
            [
                charts.Series(
                    _("input, not cached"),
                    "s1",
                    [d.tokens.input - d.tokens.cached_input for d in each],
                    step_links,
                ),
                charts.Series(
                    _("cached input"),
                    "s3",
                    [d.tokens.cached_input for d in each],
                    step_links,
                ),
                charts.Series(
                    _("output"), "s2", [d.tokens.output for d in each], step_links
                ),
            ],
        ),
    }


def _money(
    period: Period, each: list[Day], budgets: list[tuple[Agent, BudgetState]]
) -> dict[str, Any]:
    """Each day's cost in the budget's currency (the first budget's; US dollars
    without one), against the budgets' daily share this month."""
    currency = budgets[0][1].budget.currency if budgets else "USD"
    costs = [d.costs.get(currency, Decimal(0)) for d in each]
    monthly = sum(
        (
            state.budget.money
            for _agent, state in budgets
            if state.budget.money is not None and state.budget.currency == currency
        ),
        Decimal(0),
    )
    guide = None
    if monthly:
        today = period.dates()[-1]
        next_month = (today.replace(day=28) + datetime.timedelta(days=4)).replace(day=1)
        daily = monthly / (next_month - today.replace(day=1)).days
        guide = (float(daily), _("the budget's daily share"))
    others: dict[str, Decimal] = {}
    for day in each:
        for code, amount in day.costs.items():
            if code != currency:
                others[code] = others.get(code, Decimal(0)) + amount
    return {
        "currency": currency,
        "costs": [c.quantize(Decimal("0.0001")) for c in costs],
        "total": sum(costs, Decimal(0)).quantize(Decimal("0.01")),
        "others": others,
        "unpriced": sorted(set().union(*(d.unpriced for d in each))),
        "chart": charts.columns_chart(
            _("Cost per day (%(currency)s)") % {"currency": currency},
            charts.day_names(period.dates()),
            [charts.Series(_("cost"), "s4", costs)],
            guide,
        ),
    }


def _calls(period: Period) -> dict[str, Any]:
    """Calls per tool and outcome, requests and unverified writes, with links."""
    rows: list[dict[str, Any]] = []
    for tool, calls in calls_by_tool(period).items():
        rows.append(
            {
                "title": tool_title(tool),
                "outcomes": [
                    Figure(
                        calls.outcomes[code],
                        listed(
                            "tools_toolcalllog", period, tool_name=tool, outcome=code
                        ),
                    )
                    for code in OUTCOME_LABELS
                ],
                "requests": Figure(
                    calls.requests,
                    listed(
                        "tools_toolcalllog",
                        period,
                        tool_name=tool,
                        expires_at__isnull="False",
                    ),
                ),
                "unverifiable": Figure(
                    calls.unverifiable,
                    listed(
                        "tools_toolcalllog",
                        period,
                        tool_name=tool,
                        verification="unverifiable",
                    ),
                ),
            }
        )
    series = [
        charts.Series(
            str(label),
            f"o-{code}",
            [row["outcomes"][n].value for row in rows],
            [row["outcomes"][n].link for row in rows],
        )
        for n, (code, label) in enumerate(OUTCOME_LABELS.items())
    ]
    return {
        "rows": rows,
        "outcomes": [str(label) for label in OUTCOME_LABELS.values()],
        "chart": charts.rows_chart(
            _("Tool calls by outcome"), [row["title"] for row in rows], series
        ),
    }


def _decisions(period: Period) -> list[dict[str, Any]]:
    def link(tool: str, kind: str, **more: str) -> str:
        return listed(
            "approvals_decision", period, "decided_at", tool=tool, kind=kind, **more
        )

    rows = []
    for tool, found in decisions_by_tool(period).items():
        decided: ToolDecisions = found
        rows.append(
            {
                "title": tool_title(tool),
                "approved_unchanged": Figure(
                    decided.approved_unchanged,
                    link(tool, "approved", made_by="assistant"),
                ),
                "corrected": Figure(decided.corrected, link(tool, "superseded")),
                "rejected": Figure(decided.rejected, link(tool, "rejected")),
                "expired": Figure(decided.expired, link(tool, "expired")),
                "median": wait_words(decided.median),
                "p90": wait_words(decided.p90),
            }
        )
    return rows


def _say_why_nothing_to_chart(
    activity: dict[str, Any], money: dict[str, Any], agents: list[Agent]
) -> None:
    """A period without a token has nothing to chart for tokens and cost: each
    chart says why (the offline demo model uses none) instead of an empty axis."""
    if any(d.tokens.input or d.tokens.output for d in activity["each"]):
        return
    offline = bool(agents) and all(
        agent.provider == Agent.Provider.OFFLINE or provider_missing_key(agent.provider)
        for agent in agents
    )
    if offline:
        activity["tokens_chart"].note = _(
            "The offline demo model answers here, and it uses no tokens: there is "
            "nothing to chart."
        )
        money["chart"].note = _(
            "The offline demo model answers here, and it costs nothing: there is "
            "nothing to chart."
        )
    else:
        activity["tokens_chart"].note = _("No tokens were used in this period.")
        money["chart"].note = _("Nothing was spent in this period.")


def panel_context(period: Period, *, owner: bool) -> dict[str, Any]:
    """Everything the Panel shows for the period (about a dozen queries)."""
    business = period.business
    prices = prices_for(business_id=business.pk)
    activity = _activity(period, days_of_messages(period, prices))
    budgets = []
    agents = list(Agent.objects.filter(business=business).order_by("name"))
    for agent in agents:
        agent.business = business  # one row, already read
        state = budget_state(agent, prices)
        if state is not None:
            budgets.append((agent, state))
    handoffs = handoffs_counted(period)
    money = _money(period, activity["each"], budgets)
    _say_why_nothing_to_chart(activity, money, agents)
    days = [
        {
            "day": day,
            "conversations": Figure(count, link),
            "turns_link": turns_link,
            "steps_link": steps_link,
            "one": one,
            "cost": cost,
        }
        for day, count, link, turns_link, steps_link, one, cost in zip(
            activity["dates"],
            activity["conversations"],
            activity["conversation_links"],
            activity["turn_links"],
            activity["step_links"],
            activity["each"],
            money["costs"],
            strict=True,
        )
    ]
    return {
        "period": period,
        "activity": activity,
        "money": money,
        "days": days,
        "budgets": budgets,
        "calls": _calls(period),
        "decisions": _decisions(period),
        "handoffs_opened": Figure(handoffs["opened"], listed("tools_handoff", period)),
        "handoffs_resolved": Figure(
            handoffs["resolved"], listed("tools_handoff", period, "resolved_at")
        ),
        "readiness": readiness_for(business),
        "suggest_after": SUGGEST_AFTER,
        "last_decisions": LAST_DECISIONS,
        "owner": owner,
    }
