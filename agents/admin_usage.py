"""The owners' price list of models, beside the list prices shipped with
Gymnasia (imported by ``agents.admin``, which registers the app's pages)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from agents.models import ModelPrice
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
