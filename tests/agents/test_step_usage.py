"""What each model step cost: the tokens its provider billed, stored on the
step's row by the turn, priced by the owner's prices or the shipped list, in
``Decimal``; a model with no price, or a step with no usage, costs "unknown"."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.http import HttpRequest

from agents.models import Agent, Message, ModelPrice
from agents.usage import LIST_PRICES, Price, Tokens, cost, usage_by_model
from gymnasia.gyms.models import Business
from tests.factories import BusinessFactory
from tests.fakes.llm_server import Step, running_fake_llm

pytestmark = pytest.mark.django_db


def seeded(provider="offline", model=""):
    out = StringIO()
    call_command("seed_demo", provider=provider, model=model, stdout=out)
    logins = dict(line.split(": ", 1) for line in out.getvalue().splitlines()[:2])
    return Agent.objects.get(), logins


def start(client, agent):
    """A visitor's new conversation through the API; the client keeps its token."""
    started = client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key},
        content_type="application/json",
    ).json()
    client.conversation_tokens = {started["conversation"]: started["token"]}
    return started["conversation"]


def say(client, conversation, text):
    """The messages the turn added, the member's first."""
    response = client.post(
        f"/api/v1/conversations/{conversation}/messages",
        {"text": text},
        content_type="application/json",
        headers={"Authorization": f"Bearer {client.conversation_tokens[conversation]}"},
    )
    assert response.status_code == 200, response.content
    return response.json()["messages"]


def ask(client, agent, text):
    conversation = start(client, agent)
    say(client, conversation, text)
    return conversation


def searched_then_answered(body):
    if any(i.get("type") == "function_call_output" for i in body["input"]):
        return Step(text="Arroz blanco: 28 g.")
    return Step(tool_calls=[("call_1", "search_foods", {"query": "arroz"})])


@pytest.fixture
def openai_agent(settings, monkeypatch):
    with running_fake_llm() as fake:
        settings.OPENAI_API_KEY = "sk-test"
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.base_url}/v1")
        agent, logins = seeded("openai", "gpt-5-mini")
        fake.script("openai", searched_then_answered)
        yield agent, logins, fake


def test_each_step_row_holds_what_its_provider_billed(client, openai_agent):
    agent, _, fake = openai_agent
    conversation = ask(client, agent, "¿Cuántos hidratos tiene el arroz?")

    # What the fake reported, its prompt cache's reads included.
    billed = fake.billed["openai"]
    assert len(billed) == 2
    rows = list(
        Message.objects.filter(conversation_id=conversation)
        .exclude(model="")
        .order_by("pk")
    )
    assert [row.role for row in rows] == ["step", "assistant"]
    for row, counts in zip(rows, billed, strict=True):
        assert row.model == "gpt-5-mini"
        assert (
            row.input_tokens,
            row.cached_input_tokens,
            row.cache_write_tokens,
            row.output_tokens,
        ) == (counts.input, counts.cached, 0, counts.output)

    [usage] = usage_by_model(
        Message.objects.filter(conversation_id=conversation),
        business_id=agent.business_id,
    )
    price = LIST_PRICES["gpt-5-mini"]
    fresh = sum(c.input - c.cached for c in billed)
    expected = (
        fresh * price.input
        + sum(c.cached for c in billed) * price.cached_input
        + sum(c.output for c in billed) * price.output
    ) / Decimal(1_000_000)
    assert (usage.model, usage.steps, usage.unreported) == ("gpt-5-mini", 2, 0)
    assert usage.cost == expected > 0
    assert usage.price is price


def test_the_owners_price_wins_and_an_unpriced_model_costs_unknown(
    client, openai_agent
):
    agent, _, _ = openai_agent
    conversation = ask(client, agent, "¿Cuántos hidratos tiene el arroz?")
    messages = Message.objects.filter(conversation_id=conversation)
    ModelPrice.objects.create(
        business=agent.business,
        model="gpt-5-mini",
        currency="EUR",
        input=Decimal("1"),
        cached_input=Decimal("1"),
        output=Decimal("1"),
    )
    # Another gym's price is not this gym's.
    ModelPrice.objects.create(
        business=BusinessFactory(),
        model="gpt-5-mini",
        input=Decimal("9"),
        cached_input=Decimal("9"),
        output=Decimal("9"),
    )

    [usage] = usage_by_model(messages, business_id=agent.business_id)

    total = usage.tokens.input + usage.tokens.output
    assert usage.price is not None and usage.price.currency == "EUR"
    assert usage.cost == Decimal(total) / Decimal(1_000_000)

    messages.exclude(model="").update(model="gpt-unpriced")
    [unpriced] = usage_by_model(messages, business_id=agent.business_id)
    assert (unpriced.price, unpriced.cost) == (None, None)


def test_a_step_without_usage_makes_the_cost_unknown(client, openai_agent):
    agent, _, _ = openai_agent
    conversation = ask(client, agent, "¿Cuántos hidratos tiene el arroz?")
    messages = Message.objects.filter(conversation_id=conversation)
    messages.filter(role="step").update(input_tokens=None, output_tokens=None)

    [usage] = usage_by_model(messages, business_id=agent.business_id)

    assert (usage.steps, usage.unreported, usage.cost) == (2, 1, None)


def test_the_offline_model_records_zeros_and_costs_nothing(client):
    agent, _ = seeded()
    conversation = ask(client, agent, "¿Cuántos hidratos tiene el arroz blanco?")

    rows = Message.objects.filter(conversation_id=conversation).exclude(model="")
    assert rows.exists()
    assert set(
        rows.values_list(
            "model", "input_tokens", "cached_input_tokens", "output_tokens"
        )
    ) == {("offline", 0, 0, 0)}
    [usage] = usage_by_model(rows, business_id=agent.business_id)
    assert usage.cost == Decimal(0)


def test_cost_is_exact_in_decimal():
    sonnet = LIST_PRICES["claude-sonnet-4-5"]
    tokens = Tokens(
        input=1_000_000, cached_input=400_000, cache_write=100_000, output=10_000
    )
    # 500,000 fresh at 3, 400,000 read at 0.30, 100,000 written at 3.75, 10,000 out at 15
    assert cost(tokens, sonnet) == Decimal("2.145")
    no_write_price = Price("USD", Decimal(2), Decimal(1), None, Decimal(4))
    # A write without a price of its own costs input.
    assert cost(Tokens(10, 0, 10, 0), no_write_price) == Decimal("0.00002")
    assert cost(Tokens(), None) == 0
    assert cost(Tokens(output=1), None) is None


def test_the_conversation_page_shows_tokens_and_cost(client, openai_agent, settings):
    settings.LANGUAGE_CODE = "en"
    agent, logins, _ = openai_agent
    conversation = ask(client, agent, "¿Cuántos hidratos tiene el arroz?")
    username, password = logins["owner"].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)

    page = client.get(f"/admin/agents/conversation/{conversation}/change/")

    text = page.content.decode()
    [usage] = usage_by_model(
        Message.objects.filter(conversation_id=conversation),
        business_id=agent.business_id,
    )
    assert "What the model steps cost" in text
    shown = usage.cost.quantize(Decimal("0.000001"), ROUND_HALF_UP).normalize()
    assert f"{shown:f} USD" in text
    assert "list price of 2026-12-05" in text


@pytest.mark.parametrize("role", ["owner", "staff"])
def test_prices_in_admin_owners_set_staff_read(client, role, settings):
    settings.LANGUAGE_CODE = "en"
    agent, logins = seeded()
    other = ModelPrice.objects.create(
        business=BusinessFactory(),
        model="gpt-of-another-gym",
        input=Decimal("9"),
        cached_input=Decimal("9"),
        output=Decimal("9"),
    )
    username, password = logins[role].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)

    listed = client.get("/admin/agents/modelprice/")
    assert listed.status_code == 200
    text = listed.content.decode()
    assert "gpt-of-another-gym" not in text
    assert "List prices of 2026-12-05" in text
    assert client.get(f"/admin/agents/modelprice/{other.pk}/change/").status_code in (
        302,
        404,
    )

    form = {
        "business": agent.business_id,
        "model": "claude-sonnet-4-5",
        "currency": "USD",
        "input": "2.5",
        "cached_input": "0.25",
        "cache_write": "",
        "output": "12",
    }
    added = client.post("/admin/agents/modelprice/add/", form)
    if role == "owner":
        assert "Set your price for gpt-5-mini" in text
        assert added.status_code == 302
        assert ModelPrice.objects.filter(business=agent.business).count() == 1
    else:
        assert "Set your price" not in text
        assert added.status_code == 403
        assert ModelPrice.objects.filter(business=agent.business).count() == 0
    assert ModelPrice.objects.count() == 1 + (role == "owner")
    assert Business.objects.count() == 2
