"""The handler of ``handoff_to_staff``, which needs no integration."""

from __future__ import annotations

from typing import Any

from tools.models import Handoff
from tools.registry import HandlerContext, handles, verifies
from tools.services import handoff_create
from tools.types import NOT_APPLIED, OK, VERIFIED, Outcome


@handles("handoff_to_staff")
def handoff_to_staff(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    handoff = handoff_create(
        business=ctx.business,
        member=ctx.member,
        conversation_key=ctx.conversation_key,
        cause=Handoff.Cause.MEMBER_ASKED,
        reason=args["reason"],  # the member's words, as the model put them
    )
    receipt = {"handoff_id": str(handoff.pk)}
    return Outcome(
        OK,
        {**receipt, "message": "The gym's staff will answer in this conversation."},
        receipt=receipt,
    )


@verifies("handoff_to_staff")
def verify_handoff_to_staff(
    ctx: HandlerContext, args: dict[str, Any], outcome: Outcome
) -> str:
    exists = Handoff.objects.filter(
        business=ctx.business,
        pk=outcome.receipt["handoff_id"],
        status=Handoff.Status.OPEN,
    ).exists()
    return VERIFIED if exists else NOT_APPLIED
