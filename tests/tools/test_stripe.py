"""The ``stripe`` integration against a fake of Stripe's REST API on loopback."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tools.dispatcher import dispatch_tool_call
from tools.integrations import client_for
from tools.models import Handoff, Integration, ToolCallLog
from tools.selection import ToolPolicy
from tools.services import integration_health_check
from tools.types import ToolCall

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(world, stripe):
    world.connect_stripe(stripe)
    return world


def refund(world, amount, payment="monthly_fee", **kwargs):
    arguments = {"payment_id": world.ids[f"payment_id:{payment}"], "amount": amount}
    return world.call("refund_payment", arguments, **kwargs)


def test_list_payments_shows_the_members_charges(shop):
    result = shop.call("list_payments", {})
    payments = shop.normalize(dict(result.payload))["payments"]
    assert [(p["payment_id"], p["amount"], p["refundable"]) for p in payments] == [
        ("monthly_fee", 45, 45),
        ("towel", 12.5, 12.5),
    ]
    assert payments[0]["currency"] == "EUR"


def test_refund_succeeds_and_is_verified(shop, stripe):
    result = refund(shop, 12.5)
    assert result.status == "ok"
    assert result.payload["verification"] == "verified"
    assert result.payload["refund"]["amount"] == 12.5
    [refund_made] = stripe.refunds.values()
    assert refund_made["amount"] == 1250
    log = ToolCallLog.objects.get()
    [post] = stripe.refund_posts()
    assert post["headers"]["idempotency-key"] == f"gymnasia-{log.pk}"
    assert post["form"] == {
        "charge": shop.ids["payment_id:monthly_fee"],
        "amount": "1250",
    }


def test_refund_after_a_refused_connection_is_retried_once_done(
    shop, stripe, monkeypatch
):
    stripe.refuse_for(3600)
    # Stripe comes back while the dispatcher waits to retry.
    monkeypatch.setattr("tools.execution._pause", lambda seconds: stripe.listen_again())
    result = refund(shop, 10)
    assert result.status == "ok", result.payload
    log = ToolCallLog.objects.get()
    assert log.attempts == 2
    assert [s.get("error") for s in log.steps if s["step"] == "attempt"] == [
        "NotDelivered",
        None,
    ]
    assert len(stripe.refunds) == 1
    [post] = stripe.refund_posts()
    assert post["headers"]["idempotency-key"] == f"gymnasia-{log.pk}"


def test_refund_whose_answer_times_out_is_not_retried_and_handed_off(shop, stripe):
    stripe.delay_after_refund = 2.0
    result = refund(shop, 10)
    assert result.status == "unknown_outcome"
    assert result.payload["verification"] == "unverifiable"
    assert len(stripe.refund_posts()) == 1
    assert len(stripe.refunds) == 1
    handoff = Handoff.objects.get()
    assert handoff.tried["tool"] == "refund_payment"
    assert ToolCallLog.objects.get().attempts == 1


def test_refund_not_found_on_read_back_is_a_failure(shop, stripe):
    stripe.forget_refunds = True
    result = refund(shop, 10)
    assert result.status == "failed"
    assert result.payload["verification"] == "not_applied"
    assert "refund" not in result.payload


def test_the_same_action_key_cannot_refund_twice(shop, stripe):
    client = client_for("stripe", shop.business)
    charge = shop.ids["payment_id:monthly_fee"]
    first = client.refund(charge_id=charge, cents=500, idempotency_key="gymnasia-same")
    again = client.refund(charge_id=charge, cents=500, idempotency_key="gymnasia-same")
    assert first["id"] == again["id"]
    assert len(stripe.refunds) == 1
    assert len(stripe.refund_posts()) == 2


def test_refund_above_the_refundable_rest_is_refused_before_any_refund_request(
    shop, stripe
):
    result = refund(shop, 12.51, payment="towel")
    assert result.status == "invalid_arguments"
    assert "12.5" in result.payload["errors"][0]
    assert stripe.refund_posts() == []


def test_refund_above_the_owners_limit_is_refused_before_any_request(shop, stripe):
    context = shop.context()
    offered = dict(context.offered)
    offered["refund_payment"] = ToolPolicy(mode="auto", max_amount=20)
    before = len(stripe.requests)
    arguments = {"payment_id": shop.ids["payment_id:monthly_fee"], "amount": 25}
    result = dispatch_tool_call(
        ToolCall(id="c", name="refund_payment", arguments=arguments),
        replace(context, offered=offered),
    )
    assert result.status == "invalid_arguments"
    assert "limit" in result.payload["errors"][0]
    assert len(stripe.requests) == before


def test_refund_with_more_decimals_than_the_currency_is_refused(shop, stripe):
    result = refund(shop, 10.005)
    assert result.status == "invalid_arguments"
    assert stripe.refund_posts() == []


def test_another_customers_payment_is_not_found(shop, stripe):
    result = refund(shop, 10, payment="stranger")
    assert result.status == "not_found"
    assert stripe.refund_posts() == []


def test_health_check_records_failure_and_recovery(shop, stripe):
    integration = Integration.objects.get(kind="stripe")
    stripe.fail_health = True
    assert not integration_health_check(integration=integration)
    integration.refresh_from_db()
    assert integration.status == "failing"
    assert integration.last_error
    stripe.fail_health = False
    assert integration_health_check(integration=integration)
    integration.refresh_from_db()
    assert (integration.status, integration.last_error) == ("connected", "")
