"""Handlers of the ``memberships`` tools."""

from __future__ import annotations

import datetime
from typing import Any

from django.utils.translation import gettext as _

from gymnasia.errors import Conflict
from tools.registry import HandlerContext, checks, handles, rehearsed, verifies
from tools.selectors import tool_calls_waiting_arguments
from tools.types import NO_RESULTS, NOT_APPLIED, OK, VERIFIED, Outcome


@handles("get_membership")
def get_membership(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    """The membership, with the member's freezes asked for that wait for staff: a
    member who just asked for one hears of it, not that there is none."""
    membership = ctx.client.current(member=ctx.required_member)
    if membership is None:
        return Outcome(NO_RESULTS, {"message": "The member has no membership."})
    requested = tool_calls_waiting_arguments(
        business_id=ctx.business.pk,
        member_id=ctx.required_member.pk,
        tool_name="freeze_membership",
    )
    membership["freezes_waiting_for_approval"] = [
        {"start": r["start"], "end": r["end"]} for r in requested
    ]
    return Outcome(OK, {"membership": membership})


@handles("freeze_membership")
def freeze_membership(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    freeze = ctx.client.freeze(
        member=ctx.required_member,
        start=datetime.date.fromisoformat(args["start"]),
        end=datetime.date.fromisoformat(args["end"]),
    )
    return Outcome(OK, {"freeze": freeze}, receipt=freeze)


_freeze_rehearsed = rehearsed(freeze_membership)


@checks("freeze_membership")
def check_freeze_membership(ctx: HandlerContext, args: dict[str, Any]) -> None:
    """The freeze as its handler would make it, and not over the days of another
    freeze of the member that waits for staff: staff would approve one and see
    the other fail."""
    _freeze_rehearsed(ctx, args)
    for other in ctx.waiting():
        if other["start"] <= args["end"] and args["start"] <= other["end"]:
            raise Conflict(
                _(
                    "It overlaps the freeze from %(start)s to %(end)s, which is "
                    "waiting for the staff's approval."
                )
                % {"start": other["start"], "end": other["end"]},
                code="freeze_overlaps_waiting",
                params={"start": other["start"], "end": other["end"]},
            )


@verifies("freeze_membership")
def verify_freeze_membership(
    ctx: HandlerContext, args: dict[str, Any], outcome: Outcome
) -> str:
    found = ctx.client.find_freeze(
        member=ctx.required_member, freeze_id=outcome.receipt["freeze_id"]
    )
    if found and found["start"] == args["start"] and found["end"] == args["end"]:
        return VERIFIED
    return NOT_APPLIED
