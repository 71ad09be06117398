"""The published tools: names, descriptions for the model, argument schemas.

Names are a public interface (DESIGN.md, "Tool names"): never rename one. The
member and the business are never arguments; they come from the session (R4).
"""

from __future__ import annotations

from typing import Any

from tools.registry import ToolDeclaration

DATE = {"type": "string", "format": "date", "description": "A date as YYYY-MM-DD."}
ID = {"type": "integer", "minimum": 1}


def _object(
    properties: dict[str, Any], required: list[str] | None = None
) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


PUBLISHED: list[ToolDeclaration] = [
    ToolDeclaration(
        name="search_foods",
        description=(
            "Search the gym's food catalog by name and return each matching food with "
            "its id and its kcal, carbohydrates, protein and fat per 100 g. Use it "
            "before answering any question about a food's nutrients and before adding "
            "a food to a meal (you need its food_id). Different varieties (white or "
            "brown rice) are different foods: name the one you mean. Do not use it for "
            "the member's own diary."
        ),
        parameters=_object(
            {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 100,
                    "description": "One or more words of the food's name, e.g. 'arroz'.",
                }
            }
        ),
        effect="read",
        needs_member=False,
        integration="nutrition",
    ),
    ToolDeclaration(
        name="get_meal_diary",
        description=(
            "Read the member's meal diary for one day: each entry with its entry_id, "
            "meal, food, grams and nutrients. Use it when the member asks what they "
            "logged or ate, or before removing an entry."
        ),
        parameters=_object({"date": DATE}),
        effect="read",
        needs_member=True,
        integration="nutrition",
    ),
    ToolDeclaration(
        name="add_food_to_meal",
        description=(
            "Log grams of a catalog food in one of the member's meals. Get the food_id "
            "from search_foods first; never guess it. Only use it when the member asks "
            "to log or add food."
        ),
        parameters=_object(
            {
                "date": DATE,
                "meal": {
                    "type": "string",
                    "enum": ["breakfast", "lunch", "dinner", "snack"],
                },
                "food_id": {**ID, "description": "The food_id search_foods returned."},
                "grams": {"type": "number", "exclusiveMinimum": 0, "maximum": 5000},
                "again": {
                    "type": "boolean",
                    "description": (
                        "Only when the member asks for the same food and grams once "
                        "more (another 100 g, again): logs a new entry although an "
                        "identical one was just logged. Leave it out otherwise."
                    ),
                },
            },
            required=["date", "meal", "food_id", "grams"],
        ),
        effect="write",
        needs_member=True,
        integration="nutrition",
        repeatable=True,
    ),
    ToolDeclaration(
        name="remove_meal_entry",
        description=(
            "Remove one entry from the member's meal diary. Get the entry_id from "
            "get_meal_diary first. Only when the member asks to remove or correct it."
        ),
        parameters=_object({"entry_id": {**ID, "description": "From get_meal_diary."}}),
        effect="write",
        needs_member=True,
        integration="nutrition",
    ),
    ToolDeclaration(
        name="list_classes",
        description=(
            "List the gym's classes between two dates (at most 31 days) that have "
            "not started yet, each with its session_id, start and end in the gym's "
            "local time, instructor, room and places left, and for a verified member "
            "member_booked (whether the member already has a place in it). Optionally "
            "filter by class type, e.g. 'spinning'. Use it before booking (you need the "
            "session_id)."
        ),
        parameters=_object(
            {
                "date_from": DATE,
                "date_to": DATE,
                "class_type": {"type": "string", "minLength": 1, "maxLength": 60},
            },
            required=["date_from", "date_to"],
        ),
        effect="read",
        needs_member=False,
        integration="classes",
    ),
    ToolDeclaration(
        name="list_my_bookings",
        description=(
            "List the member's upcoming class bookings with their booking_id. Use it "
            "when the member asks about their bookings or before cancelling one."
        ),
        parameters=_object({}),
        effect="read",
        needs_member=True,
        integration="classes",
    ),
    ToolDeclaration(
        name="book_class",
        description=(
            "Book the member a place in a class session. Get the session_id from "
            "list_classes first. Only when the member asks to book."
        ),
        parameters=_object({"session_id": {**ID, "description": "From list_classes."}}),
        effect="write",
        needs_member=True,
        integration="classes",
    ),
    ToolDeclaration(
        name="cancel_booking",
        description=(
            "Cancel one of the member's class bookings before the class starts. Get "
            "the booking_id from list_my_bookings first. Only when the member asks."
        ),
        parameters=_object(
            {"booking_id": {**ID, "description": "From list_my_bookings."}}
        ),
        effect="write",
        needs_member=True,
        integration="classes",
    ),
    ToolDeclaration(
        name="get_membership",
        description=(
            "Read the member's membership: plan, today's status, start and end dates, "
            "freeze periods, and freezes asked for that wait for the staff's approval."
        ),
        parameters=_object({}),
        effect="read",
        needs_member=True,
        integration="memberships",
    ),
    ToolDeclaration(
        name="freeze_membership",
        description=(
            "Freeze (pause) the member's membership from start to end, both days "
            "included; the membership's end date moves later by the frozen days. Only "
            "when the member asks to freeze or pause it, with dates they gave."
        ),
        parameters=_object({"start": DATE, "end": DATE}),
        effect="write",
        needs_member=True,
        integration="memberships",
    ),
    ToolDeclaration(
        name="list_payments",
        description=(
            "List the member's card payments to the gym (from the gym's Stripe "
            "account), each with its payment_id, date, description, amount, currency, "
            "amount already refunded and amount still refundable. Use it before a "
            "refund and when the member asks about their payments."
        ),
        parameters=_object({}),
        effect="read",
        needs_member=True,
        integration="stripe",
    ),
    ToolDeclaration(
        name="refund_payment",
        description=(
            "Refund part or all of one of the member's card payments. Get the "
            "payment_id from list_payments first; the amount is in the payment's "
            "currency units (e.g. 12.50) and cannot exceed what is still refundable. "
            "Only when the member asks for a refund; the gym's staff may need to "
            "approve it."
        ),
        parameters=_object(
            {
                "payment_id": {
                    "type": "string",
                    "pattern": "^ch_[A-Za-z0-9]{1,64}$",
                    "description": "From list_payments.",
                },
                "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 100000},
            }
        ),
        effect="write",
        needs_member=True,
        integration="stripe",
        amount_argument="amount",
    ),
    ToolDeclaration(
        name="list_my_requests",
        description=(
            "List the member's requests that wait for the gym's staff or that staff "
            "decided in the last 7 days, newest first: each with its request_id, "
            "tool, title, what it is about in words (about) and as facts (an id as "
            "what it names: the session's class and local start, the diary "
            "entry's food and grams; the freeze's dates), "
            "its state (waiting_for_staff, approved, done, failed, "
            "outcome_unknown, rejected, expired), when it was made and decided, "
            "and the staff's reason. Use it when the member asks how a request "
            "stands or whether it was approved."
        ),
        parameters=_object({}),
        effect="read",
        needs_member=True,
        integration=None,
    ),
    ToolDeclaration(
        name="handoff_to_staff",
        description=(
            "Hand the conversation to the gym's staff, who will answer here. Use it "
            "when the member asks for a person, or for something no other tool does. "
            "Say briefly why."
        ),
        parameters=_object(
            {"reason": {"type": "string", "minLength": 1, "maxLength": 1000}}
        ),
        effect="write",
        needs_member=False,
        integration=None,
    ),
]
