"""Handlers of the ``classes`` tools."""

from __future__ import annotations

import datetime
from typing import Any

from django.utils.translation import gettext as _

from gymnasia.errors import InvalidValue
from tools.registry import HandlerContext, checks, handles, rehearsed, verifies
from tools.types import NO_RESULTS, NOT_APPLIED, OK, VERIFIED, Outcome

MAX_LISTED_DAYS = 31


@handles("list_classes")
def list_classes(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    date_from = datetime.date.fromisoformat(args["date_from"])
    date_to = datetime.date.fromisoformat(args["date_to"])
    if date_to < date_from:
        raise InvalidValue(
            _("date_to cannot be before date_from."),
            field="date_to",
            code="end_before_start",
        )
    if (date_to - date_from).days >= MAX_LISTED_DAYS:
        raise InvalidValue(
            _("Classes can be listed for at most %(days)s days at a time.")
            % {"days": MAX_LISTED_DAYS},
            field="date_to",
            code="too_many_days",
            params={"days": MAX_LISTED_DAYS},
        )
    sessions = ctx.client.list_sessions(
        date_from=date_from,
        date_to=date_to,
        class_type=args.get("class_type"),
        member=ctx.member,
    )
    if not sessions:
        return Outcome(
            NO_RESULTS, {"message": "No classes are scheduled for those days."}
        )
    return Outcome(OK, {"sessions": sessions, "count": len(sessions)})


@handles("list_my_bookings")
def list_my_bookings(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    bookings = ctx.client.list_bookings(member=ctx.required_member)
    if not bookings:
        return Outcome(NO_RESULTS, {"message": "The member has no upcoming bookings."})
    return Outcome(OK, {"bookings": bookings, "count": len(bookings)})


@handles("book_class")
def book_class(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    booking = ctx.client.book(member=ctx.required_member, session_id=args["session_id"])
    return Outcome(OK, {"booking": booking}, receipt=booking)


checks("book_class")(rehearsed(book_class))


@verifies("book_class")
def verify_book_class(
    ctx: HandlerContext, args: dict[str, Any], outcome: Outcome
) -> str:
    found = ctx.client.find_booking(
        member=ctx.required_member, booking_id=outcome.receipt["booking_id"]
    )
    if (
        found
        and found["status"] == "confirmed"
        and found["session_id"] == args["session_id"]
    ):
        return VERIFIED
    return NOT_APPLIED


@handles("cancel_booking")
def cancel_booking(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    booking = ctx.client.cancel(
        member=ctx.required_member, booking_id=args["booking_id"]
    )
    return Outcome(OK, {"booking": booking}, receipt=booking)


checks("cancel_booking")(rehearsed(cancel_booking))


@verifies("cancel_booking")
def verify_cancel_booking(
    ctx: HandlerContext, args: dict[str, Any], outcome: Outcome
) -> str:
    found = ctx.client.find_booking(
        member=ctx.required_member, booking_id=args["booking_id"]
    )
    return VERIFIED if found and found["status"] == "cancelled" else NOT_APPLIED
