"""The demo model and payments, with the demo gym's Stripe account connected (a
fake on loopback): it lists them, and never picks one to refund for the member,
least of all with money."""

from __future__ import annotations

import secrets

import pytest

from tests.agents.api_client import send
from tests.agents.offline_kit import member_conversation, reply_to
from tests.fakes.stripe_server import running_fake_stripe
from tools.models import Integration, ToolCallLog
from tools.services import integration_credentials_set

pytestmark = pytest.mark.django_db


def _requests():
    """The requests: the calls that waited for staff (were gated)."""
    return ToolCallLog.objects.filter(expires_at__isnull=False)


@pytest.fixture
def payments(agent):
    """Lucía's two card payments: the monthly fee, then (older) a towel."""
    key = "sk_test_" + secrets.token_hex(12)
    with running_fake_stripe(key) as fake:
        stripe = Integration.objects.get(business=agent.business, kind="stripe")
        stripe.status = Integration.Status.CONNECTED
        stripe.config = {"base_url": fake.base_url, "timeout_seconds": 2}
        stripe.save()
        integration_credentials_set(integration=stripe, secret_key=key)
        customer = fake.add_customer(email="lucia.romero@example.com")
        fee = fake.add_charge(
            customer=customer,
            amount=4500,
            description="Cuota mensual",
            created=1_780_000_000,
        )
        towel = fake.add_charge(
            customer=customer, amount=1250, description="Toalla", created=1_770_000_000
        )
        yield {"fee": fee, "towel": towel, "stripe": fake}


def refunds_asked() -> list[dict]:
    return [
        log.arguments
        for log in ToolCallLog.objects.filter(tool_name="refund_payment").order_by(
            "created_at"
        )
    ]


def test_a_refund_of_no_payment_in_particular_asks_which(client, agent, payments):
    """It asked to refund the newest payment in full."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Quiero una devolución"))

    assert reply.startswith(
        "Tienes varios pagos: Cuota mensual (2026-05-28, 45 EUR), Toalla "
    )
    assert "Toalla (2026-02-02, 12,5 EUR)" in reply  # a decimal comma in Spanish
    assert reply.endswith("Dímelo, por ejemplo: «devuélveme el pago de cuota».")
    assert refunds_asked() == []
    assert not _requests().exists()


@pytest.mark.parametrize(
    ("said", "payment", "amount"),
    [
        ("Devuélveme el pago de la toalla", "towel", 12.5),
        ("Devuélveme el último pago", "fee", 45),
        ("Devuélveme 10 euros de la cuota", "fee", 10),
        ("Quiero que me devolváis el último pago", "fee", 45),
        ("¿Me podéis devolver lo de la toalla?", "towel", 12.5),
        ("I want my money back for the last payment", "fee", 45),
    ],
)
def test_the_payment_named_is_the_one_asked_to_refund(
    client, agent, payments, said, payment, amount
):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert refunds_asked() == [{"payment_id": payments[payment], "amount": amount}]
    assert reply.startswith(
        "He enviado tu solicitud al equipo del gimnasio"
    )  # refunds wait for staff at the demo gym
    assert _requests().get().arguments["payment_id"] == payments[payment]


@pytest.mark.parametrize(
    "said",
    ["¿Qué pagos he hecho?", "¿Cuánto pagué el mes pasado?", "What did I pay?"],
)
def test_her_payments_are_listed_newest_first_and_nothing_is_refunded(
    client, agent, payments, said
):
    """It answered with what it can do, "your payments" among them."""
    fake = payments["stripe"]
    fake.charges[payments["towel"]]["amount_refunded"] = 500
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert reply == (
        "Tus pagos con tarjeta:\n"
        "- Cuota mensual (2026-05-28): 45 EUR\n"
        "- Toalla (2026-02-02): 12,5 EUR, devueltos 5 EUR"
    )
    assert refunds_asked() == []
    assert not _requests().exists()


@pytest.mark.parametrize(
    "said", ["¿Cuánto pagué el mes pasado?", "Quiero que me devolváis el último pago"]
)
def test_payments_asked_for_without_stripe_connected_are_out_of_reach(
    client, agent, said
):
    """At the demo gym, whose Stripe account is not connected, it answered with
    what it can do; no payment tool is offered, so it says it cannot."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert reply.startswith("Eso no lo puedo hacer desde aquí.")
    assert not ToolCallLog.objects.exists()


def test_how_a_refund_request_stands_names_the_payment(client, agent, payments):
    """«¿Cómo va mi solicitud?» once said she had no request waiting (a refund
    was in no read tool's result); ``list_my_requests`` names it."""
    started = member_conversation(client, agent)
    send(client, started, "Devuélveme el pago de la toalla")
    assert _requests().get().tool_name == "refund_payment"

    reply = reply_to(send(client, started, "¿Cómo va mi solicitud?"))

    assert "No tienes ninguna solicitud" not in reply
    assert reply.endswith(
        "- Reembolso de 12,5 EUR del pago «Toalla»: esperando al equipo"
    )


@pytest.mark.parametrize(
    "asked", ["¿Me habéis reembolsado la toalla?", "Was the towel payment refunded?"]
)
def test_asking_whether_a_payment_was_refunded_asks_for_no_refund(
    client, agent, payments, asked
):
    """ "Was the towel payment refunded?" asked staff to refund it."""
    started = member_conversation(client, agent)

    send(client, started, asked)

    assert refunds_asked() == []
    assert not _requests().exists()
