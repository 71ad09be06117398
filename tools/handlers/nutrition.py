"""Handlers of the ``nutrition`` tools."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from tools.integrations.builtin import number
from tools.registry import HandlerContext, checks, handles, rehearsed, verifies
from tools.types import NO_RESULTS, NOT_APPLIED, OK, VERIFIED, Outcome


@handles("search_foods")
def search_foods(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    foods = ctx.client.search_foods(query=args["query"])
    if not foods:
        return Outcome(
            NO_RESULTS,
            {
                "query": args["query"],
                "message": "No food in the gym's catalog matches.",
            },
        )
    return Outcome(OK, {"foods": foods, "count": len(foods)})


@handles("get_meal_diary")
def get_meal_diary(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    day = datetime.date.fromisoformat(args["date"])
    entries = ctx.client.meal_diary(member=ctx.required_member, date=day)
    if not entries:
        return Outcome(
            NO_RESULTS,
            {"date": args["date"], "message": "No entries in the diary that day."},
        )
    totals = {
        key: number(sum((Decimal(str(e[key])) for e in entries), Decimal(0)))
        for key in ("kcal", "carbohydrates_g", "protein_g", "fat_g")
    }
    return Outcome(
        OK,
        {
            "date": args["date"],
            "entries": entries,
            "totals": totals,
        },
    )


@handles("add_food_to_meal")
def add_food_to_meal(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    entry = ctx.client.add_meal_entry(
        member=ctx.required_member,
        date=datetime.date.fromisoformat(args["date"]),
        meal=args["meal"],
        food_id=args["food_id"],
        grams=Decimal(str(args["grams"])),
    )
    return Outcome(OK, {"entry": entry}, receipt=entry)


checks("add_food_to_meal")(rehearsed(add_food_to_meal))


@verifies("add_food_to_meal")
def verify_add_food_to_meal(
    ctx: HandlerContext, args: dict[str, Any], outcome: Outcome
) -> str:
    found = ctx.client.find_meal_entry(
        member=ctx.required_member, entry_id=outcome.receipt["entry_id"]
    )
    if found is None:
        return NOT_APPLIED
    same = (
        found["date"] == args["date"]
        and found["meal"] == args["meal"]
        and found["food_id"] == args["food_id"]
        and Decimal(str(found["grams"]))
        == Decimal(str(args["grams"])).quantize(Decimal("0.1"))
    )
    return VERIFIED if same else NOT_APPLIED


@handles("remove_meal_entry")
def remove_meal_entry(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    entry = ctx.client.remove_meal_entry(
        member=ctx.required_member, entry_id=args["entry_id"]
    )
    return Outcome(OK, {"removed": entry}, receipt=entry)


checks("remove_meal_entry")(rehearsed(remove_meal_entry))


@verifies("remove_meal_entry")
def verify_remove_meal_entry(
    ctx: HandlerContext, args: dict[str, Any], outcome: Outcome
) -> str:
    found = ctx.client.find_meal_entry(
        member=ctx.required_member, entry_id=args["entry_id"]
    )
    return VERIFIED if found is None else NOT_APPLIED
