"""An agent's monthly budget: a provider is never asked once it is used up (the
next call, even mid-turn), the member is told in fixed words in their language
and a person takes the message where the agent hands conversations to staff,
and raising the budget lets the assistant answer again at once."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.http import HttpRequest
from django.utils import timezone

from agents.budget import Budget, Spend, budget_state, month_start
from agents.budget_alerts import budget_alert_mail
from agents.models import Agent, BudgetAlert, Message, ModelPrice
from agents.usage import Tokens
from gymnasia.gyms.models import StaffRole
from tests.agents.test_step_usage import say, searched_then_answered, seeded, start
from tests.fakes.llm_server import running_fake_llm
from tools.models import AgentToolSetting, Handoff

pytestmark = pytest.mark.django_db

HANDED_OVER = (
    "El asistente ha agotado lo que puede usar este mes, así que tu mensaje ha "
    "pasado al equipo del gimnasio; una persona te responderá aquí."
)


@pytest.fixture
def fake(settings, monkeypatch):
    with running_fake_llm() as fake:
        settings.OPENAI_API_KEY = "sk-test"
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.base_url}/v1")
        seeded("openai", "gpt-5-mini")
        fake.script("openai", searched_then_answered)
        yield fake


def provider_calls(fake):
    return len(fake.requests["openai"])


def test_the_budget_stops_the_next_call_and_raising_it_resumes(client, fake):
    agent = Agent.objects.get()
    conversation = start(client, agent)
    say(client, conversation, "¿Cuántos hidratos tiene el arroz?")
    used = budget_state_of(agent, tokens=10**9).spent.tokens
    assert used > 0 and provider_calls(fake) == 2

    agent.monthly_token_budget = used  # now used up
    agent.save()
    told = say(client, conversation, "¿Y el arroz integral?")

    assert provider_calls(fake) == 2  # not asked
    assert [m["role"] for m in told] == ["member", "notice"]
    assert told[-1]["text"] == HANDED_OVER
    [case] = Handoff.objects.all()
    assert (case.cause, case.reason) == ("budget_used_up", "¿Y el arroz integral?")

    again = say(client, conversation, "¿Hola?")
    assert "ya está con el equipo del gimnasio" in again[-1]["text"]
    assert Handoff.objects.count() == 1 and provider_calls(fake) == 2

    agent.monthly_token_budget = used * 10  # the owner raises it
    agent.save()
    answered = say(client, conversation, "¿Cuántos hidratos tiene el arroz?")
    assert provider_calls(fake) == 3  # asked again (the history holds the search)
    assert answered[-1]["role"] == "assistant"
    assert answered[-1]["text"] == "Arroz blanco: 28 g."


@pytest.mark.parametrize(
    "language, notice",
    [
        ("es", HANDED_OVER),
        (
            "en",
            "The assistant has used up what it may use this month, so your message "
            "has gone to the gym's staff; a person will answer you here.",
        ),
    ],
)
def test_a_budget_used_up_mid_turn_stops_before_the_next_step(
    client, fake, language, notice
):
    """The first step (a search) uses the rest of the budget: the step after
    it is never asked for, and what the search found is not said as an answer."""
    agent = Agent.objects.get()
    agent.monthly_token_budget = 1  # any step uses it up
    agent.language = language
    agent.save()
    conversation = start(client, agent)

    told = say(client, conversation, "How many carbs has the rice?")

    assert provider_calls(fake) == 1
    assert told[-1]["role"] == "notice" and told[-1]["text"] == notice
    assert Message.objects.filter(role="step").count() == 1
    assert not Message.objects.filter(role="assistant").exists()


def test_without_a_person_to_take_it_the_member_is_told_how_to_reach_the_gym(
    client, fake
):
    agent = Agent.objects.get()
    agent.monthly_budget = Decimal("0.01")
    agent.save()
    AgentToolSetting.objects.filter(agent=agent, tool_name="handoff_to_staff").update(
        enabled=False
    )
    agent.business.contact_details = "Tel. 910 000 000"
    agent.business.save()
    # The month already cost two cents, priced by the gym in USD.
    ModelPrice.objects.create(
        business=agent.business,
        model="gpt-5-mini",
        input=Decimal("20000"),
        cached_input=Decimal("20000"),
        output=Decimal("20000"),
    )
    conversation = start(client, agent)
    Message.objects.create(
        conversation_id=conversation,
        role="assistant",
        model="gpt-5-mini",
        input_tokens=1,
        cached_input_tokens=0,
        cache_write_tokens=0,
        output_tokens=0,
    )

    told = say(client, conversation, "¿Cuántos hidratos tiene el arroz?")

    assert provider_calls(fake) == 0
    assert told[-1]["text"] == (
        "El asistente ha agotado lo que puede usar este mes y no puede responder "
        "hasta el mes que viene. Puedes contactar con el gimnasio aquí: "
        "Tel. 910 000 000"
    )
    assert not Handoff.objects.exists()


def budget_state_of(agent, *, tokens):
    agent.monthly_token_budget = tokens
    state = budget_state(agent)
    assert state is not None
    return state


def test_only_this_months_steps_of_this_agent_count(client, fake):
    agent = Agent.objects.get()
    conversation = start(client, agent)
    say(client, conversation, "¿Cuántos hidratos tiene el arroz?")
    this_month = budget_state_of(agent, tokens=10**9).spent.tokens
    # A step of last month's, in the gym's time zone, does not count.
    before = month_start(agent.business) - datetime.timedelta(seconds=1)
    Message.objects.create(
        conversation_id=conversation,
        role="assistant",
        model="gpt-5-mini",
        input_tokens=10**6,
        cached_input_tokens=0,
        cache_write_tokens=0,
        output_tokens=0,
        created_at=before,
    )
    assert budget_state_of(agent, tokens=10**9).spent.tokens == this_month
    assert month_start(agent.business) <= timezone.now()


def test_money_counts_only_steps_priced_in_the_budgets_currency():
    budget = Budget(
        money=Decimal("10"),
        currency="EUR",
        tokens=None,
        prices={
            "priced-in-eur": _price("EUR"),
            "priced-in-usd": _price("USD"),
        },
    )
    tokens = Tokens(input=1_000_000, output=0)

    assert budget.spend("priced-in-eur", tokens) == Spend(1_000_000, Decimal("2"))
    assert budget.spend("priced-in-usd", tokens) == Spend(
        1_000_000, Decimal(0), frozenset({"priced-in-usd"})
    )
    assert budget.spend("unpriced", tokens).uncounted == {"unpriced"}
    assert budget.spend("offline", Tokens()) == Spend()
    assert budget.share(Spend(0, Decimal("8"))) == Decimal("0.8")


def _price(currency):
    from agents.usage import Price

    return Price(currency, Decimal(2), Decimal(1), None, Decimal(4))


def test_owners_are_warned_in_admin_from_80_percent(client, fake, settings):
    settings.LANGUAGE_CODE = "en"
    agent = Agent.objects.get()
    conversation = start(client, agent)
    say(client, conversation, "¿Cuántos hidratos tiene el arroz?")
    used = budget_state_of(agent, tokens=10**9).spent.tokens
    _, logins = seeded("openai", "gpt-5-mini")  # the same demo: its logins
    username, password = logins["owner"].split(" ")
    assert client.login(request=HttpRequest(), username=username, password=password)

    agent.monthly_token_budget = used * 2  # half used: no warning
    agent.save()
    page = client.get("/admin/agents/agent/").content.decode()
    assert "used this month" not in page
    shown = client.get(f"/admin/agents/agent/{agent.pk}/change/").content.decode()
    assert f"{used} of {used * 2} tokens used this month (50 %)." in shown

    agent.monthly_token_budget = used * 10 // 9  # 90 %
    agent.save()
    page = client.get("/admin/agents/agent/").content.decode()
    assert "used this month (90 %). Most of the budget is used." in page

    agent.monthly_token_budget = used
    agent.save()
    page = client.get("/admin/agents/agent/").content.decode()
    assert "The budget is used up" in page


def test_owners_are_mailed_once_at_80_and_at_100_percent(
    client, fake, monkeypatch, mailoutbox, django_capture_on_commit_callbacks
):
    queued = []
    monkeypatch.setattr(
        "agents.tasks.mail_budget_alert.delay", lambda *a: queued.append(a)
    )
    agent = Agent.objects.get()
    conversation = start(client, agent)
    say(client, conversation, "¿Cuántos hidratos tiene el arroz?")
    used = budget_state_of(agent, tokens=10**9).spent.tokens
    owner = StaffRole.objects.get(business=agent.business, role="owner")

    agent.monthly_token_budget = used * 10 // 9  # 90 %
    agent.save()
    with django_capture_on_commit_callbacks(execute=True):
        say(client, conversation, "¿Y el integral?")
        say(client, conversation, "¿Y la avena?")  # over 100 % by now
        say(client, conversation, "¿Hola?")
    alerts = list(BudgetAlert.objects.values_list("percent", flat=True))
    assert sorted(alerts) == [80, 100]
    assert len(queued) == 2 and {role for _, role in queued} == {owner.pk}

    for alert_id, role_id in queued:
        assert budget_alert_mail(alert_id=alert_id, role_id=role_id) == 0
    warned, used_up = sorted(mailoutbox, key=lambda m: "agotado" in m.subject)
    assert warned.to == [owner.user.email]
    assert warned.subject == f"{agent} ha usado el 80 % de su presupuesto"
    assert used_up.subject == f"{agent} ha agotado su presupuesto de este mes"
    assert f"/admin/agents/agent/{agent.pk}/change/" in used_up.body


def test_a_budget_mail_waits_for_the_owners_quiet_hours(client, fake, mailoutbox):
    agent = Agent.objects.get()
    owner = StaffRole.objects.get(business=agent.business, role="owner")
    owner.quiet_from, owner.quiet_until = datetime.time(0, 0), datetime.time(23, 59)
    owner.save()
    alert = BudgetAlert.objects.create(
        agent=agent, month=month_start(agent.business).date(), percent=80
    )

    wait = budget_alert_mail(alert_id=alert.pk, role_id=owner.pk)

    assert wait > 0 and mailoutbox == []
