"""The owners' price list of models, beside the list prices shipped with
Gymnasia, and an agent's monthly budget on its pages (imported by
``agents.admin``, which registers the app's pages)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from agents.budget import BudgetState, budget_state
from agents.models import Agent, ModelPrice
from agents.usage import LIST_PRICES, LIST_PRICES_AS_OF
from gymnasia.gyms.admin import BusinessScopedAdmin


@admin.register(ModelPrice)
class ModelPriceAdmin(BusinessScopedAdmin):
    list_display = [
        "model",
        "business",
        "currency",
        "input",
        "cached_input",
        "cache_write",
        "output",
    ]
    list_filter = ["business"]
    search_fields = ["model"]
    change_list_template = "admin/agents/modelprice/change_list.html"

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The list prices under the owner's, each a link to a new price of the
        owner's filled in with it."""
        add = reverse("admin:agents_modelprice_add")
        listed = [
            {
                "model": model,
                "price": price,
                "start_from": f"{add}?"
                + urlencode(
                    {
                        "model": model,
                        "currency": price.currency,
                        "input": price.input,
                        "cached_input": price.cached_input,
                        "cache_write": price.cache_write or "",
                        "output": price.output,
                    }
                ),
            }
            for model, price in LIST_PRICES.items()
        ]
        context = {
            **(extra_context or {}),
            "list_prices": listed,
            "list_prices_as_of": LIST_PRICES_AS_OF,
            "may_add": self.has_add_permission(request),
        }
        return super().changelist_view(request, context)


class BudgetShown:
    """An agent's budget this month on its admin pages: what is used, and a
    warning to its owners from 80 % on (and once it is used up)."""

    message_user: Any

    @admin.display(description=_("this month"))
    def budget_this_month(self, obj: Agent) -> str:
        state = budget_state(obj) if obj.pk else None
        if state is None:
            return gettext("No budget.")
        return _budget_said(obj, state)

    def budget_warned(self, request: HttpRequest, agents: Any) -> None:
        for agent in agents:
            state = budget_state(agent)
            if state is not None and state.warned:
                level = messages.ERROR if state.reached else messages.WARNING
                self.message_user(
                    request, f"{agent}: {_budget_said(agent, state)}", level
                )


def _budget_said(agent: Agent, state: BudgetState) -> str:
    spent, budget = state.spent, state.budget
    parts = []
    if budget.money is not None:
        parts.append(
            gettext("%(spent)s of %(limit)s %(currency)s")
            % {
                "spent": spent.money.quantize(Decimal("0.01")),
                "limit": budget.money,
                "currency": budget.currency,
            }
        )
    if budget.tokens is not None:
        parts.append(
            gettext("%(spent)s of %(limit)s tokens")
            % {"spent": spent.tokens, "limit": budget.tokens}
        )
    said = gettext("%(used)s used this month (%(share)s %%).") % {
        "used": "; ".join(parts),
        "share": int(state.share * 100),
    }
    if state.reached:
        said += " " + gettext(
            "The budget is used up: the assistant does not answer until next month "
            "or until the budget is raised, and members' messages go to the staff."
        )
    elif state.warned:
        said += " " + gettext("Most of the budget is used.")
    if spent.uncounted:
        said += " " + gettext(
            "Not counted in money (no price in the budget's currency, or no usage "
            "reported): %(models)s."
        ) % {"models": ", ".join(sorted(spent.uncounted))}
    return said
