"""Handlers of the ``stripe`` tools: the member's payments and their refunds."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from gymnasia.errors import InvalidValue, NotFound
from tools.integrations.stripe import major_units, minor_units
from tools.registry import HandlerContext, checks, handles, verifies
from tools.types import NO_RESULTS, NOT_APPLIED, OK, VERIFIED, Outcome


def _payment(charge: dict[str, Any]) -> dict[str, Any]:
    currency = str(charge["currency"])
    paid = int(charge["amount"])
    refunded = int(charge.get("amount_refunded") or 0)
    return {
        "payment_id": charge["id"],
        "date": datetime.datetime.fromtimestamp(int(charge["created"]), datetime.UTC)
        .date()
        .isoformat(),
        "description": charge.get("description") or "",
        "currency": currency.upper(),
        "amount": major_units(paid, currency),
        "refunded": major_units(refunded, currency),
        "refundable": major_units(paid - refunded, currency),
    }


@handles("list_payments")
def list_payments(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    customer = ctx.client.customer_for(ctx.required_member)
    charges = ctx.client.list_charges(customer) if customer else []
    paid = [c for c in charges if c.get("paid") and c.get("status") == "succeeded"]
    if not paid:
        return Outcome(
            NO_RESULTS, {"message": "No card payments found for this member."}
        )
    return Outcome(OK, {"payments": [_payment(c) for c in paid], "count": len(paid)})


def _refundable(
    ctx: HandlerContext, args: dict[str, Any]
) -> tuple[dict[str, Any], int]:
    """The member's payment to refund and the amount in its minor units, or the
    refusal: a payment of someone else, or more than is left of it (for a check,
    less the refunds of it that wait for staff)."""
    customer = ctx.client.customer_for(ctx.required_member)
    charge = ctx.client.get_charge(args["payment_id"]) if customer else None
    if charge is None or charge.get("customer") != customer:
        raise NotFound(
            _("No payment with that id for this member."),
            field="payment_id",
            code="payment_not_found",
        )
    currency = str(charge["currency"])
    cents = minor_units(Decimal(str(args["amount"])), currency)
    refundable = int(charge["amount"]) - int(charge.get("amount_refunded") or 0)
    waiting = sum(
        minor_units(Decimal(str(other["amount"])), currency)
        for other in ctx.waiting()
        if other["payment_id"] == charge["id"]
    )
    rest = max(refundable - waiting, 0)
    if cents > rest:
        money = {
            "rest": major_units(rest, currency),
            "waiting": major_units(waiting, currency),
            "currency": currency.upper(),
        }
        if waiting:
            raise InvalidValue(
                _(
                    "At most %(rest)s %(currency)s of this payment can still be "
                    "refunded: refunds of %(waiting)s %(currency)s more are waiting "
                    "for the staff's approval."
                )
                % money,
                field="amount",
                code="refund_over_rest_waiting",
                params=money,
            )
        raise InvalidValue(
            _("At most %(rest)s %(currency)s of this payment can still be refunded.")
            % money,
            field="amount",
            code="refund_over_rest",
            params=money,
        )
    return charge, cents


@checks("refund_payment")
def check_refund_payment(ctx: HandlerContext, args: dict[str, Any]) -> None:
    _refundable(ctx, args)


@handles("refund_payment")
def refund_payment(ctx: HandlerContext, args: dict[str, Any]) -> Outcome:
    charge, cents = _refundable(ctx, args)
    currency = str(charge["currency"])
    refund = ctx.client.refund(
        charge_id=charge["id"], cents=cents, idempotency_key=f"gymnasia-{ctx.action_id}"
    )
    receipt = {"refund_id": refund["id"], "payment_id": charge["id"], "cents": cents}
    data = {
        "refund": {
            "refund_id": refund["id"],
            "payment_id": charge["id"],
            "amount": major_units(int(refund["amount"]), currency),
            "currency": currency.upper(),
            "status": refund.get("status"),
        }
    }
    return Outcome(OK, data, receipt=receipt)


@verifies("refund_payment")
def verify_refund_payment(
    ctx: HandlerContext, args: dict[str, Any], outcome: Outcome
) -> str:
    refund = ctx.client.get_refund(outcome.receipt["refund_id"])
    if (
        refund is not None
        and refund.get("status") in ("succeeded", "pending")
        and int(refund.get("amount", -1)) == outcome.receipt["cents"]
        and refund.get("charge") == outcome.receipt["payment_id"]
    ):
        return VERIFIED
    return NOT_APPLIED
