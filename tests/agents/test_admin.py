"""Owners configure their assistant in admin; bad input changes nothing."""

from __future__ import annotations

import re
import secrets
from io import StringIO

import pytest
from django.core.management import call_command
from django.http import HttpRequest

from agents.models import Agent
from tests.admin_forms import form_data, inline_prefix_for
from tests.agents.admin_kit import agent_page, owner_signed_in, panel_row, post_changes
from tests.fakes.stripe_server import running_fake_stripe
from tools.models import AgentToolSetting, Integration
from tools.registry import published_registry

pytestmark = pytest.mark.django_db
demo = pytest.fixture(owner_signed_in)


def test_owner_connects_stripe_and_gates_a_tool_and_the_panel_follows(demo, settings):
    settings.LANGUAGE_CODE = "en"
    url, page = agent_page(demo)
    assert "hidden: integration not connected" in panel_row(page, "refund_payment")
    assert "offered (automatic)" in panel_row(page, "book_class")
    assert "hidden: needs a verified member" in panel_row(page, "book_class")

    key = "sk_test_" + secrets.token_hex(12)
    with running_fake_stripe(key) as fake:
        stripe = Integration.objects.get(kind="stripe")
        stripe_url = f"/admin/tools/integration/{stripe.pk}/change/"
        data = form_data(demo.get(stripe_url).content.decode(), "integration_form")
        data.update(secret_key=key, base_url=fake.base_url, timeout_seconds="2")
        response = demo.post(stripe_url, data)
        assert response.status_code == 302, response.content.decode()[:2000]
    stripe.refresh_from_db()
    assert (stripe.status, stripe.credentials_hint) == ("connected", f"••••{key[-4:]}")
    _, page = agent_page(demo)
    assert "offered (needs approval)" in panel_row(page, "refund_payment")

    data = form_data(page, "agent_form")
    prefix = inline_prefix_for(data, "tool_name", "book_class")
    data[f"{prefix}-mode"] = "gated"
    response = demo.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert AgentToolSetting.objects.get(tool_name="book_class").mode == "gated"
    _, page = agent_page(demo)
    assert "offered (needs approval)" in panel_row(page, "book_class")


def test_the_inline_lists_every_tool_even_unconfigured_ones(demo):
    AgentToolSetting.objects.filter(tool_name="cancel_booking").delete()
    _, page = agent_page(demo)
    data = form_data(page, "agent_form")
    names = {
        v
        for k, v in data.items()
        if k.endswith("-tool_name") and "__prefix__" not in k  # the empty form's
    }
    assert names == set(published_registry().names())


def test_each_tool_settings_control_is_labelled_with_its_tool(demo, settings):
    """Every control of a tool's row has a label naming the column and the tool,
    configured or not, so a screen reader says which tool it sets."""
    settings.LANGUAGE_CODE = "es"
    AgentToolSetting.objects.filter(tool_name="cancel_booking").delete()
    _, page = agent_page(demo)
    data = form_data(page, "agent_form")
    labels = dict(
        re.findall(
            r'<label class="visually-hidden" for="id_([^"]+)">([^<]*)</label>', page
        )
    )
    freeze = inline_prefix_for(data, "tool_name", "freeze_membership")
    cancel = inline_prefix_for(data, "tool_name", "cancel_booking")

    assert labels[f"{freeze}-mode"] == "Modo: Congelar la cuota"
    assert labels[f"{freeze}-enabled"] == "Activa: Congelar la cuota"
    assert labels[f"{cancel}-mode"] == "Modo: Cancelar una reserva de clase"
    for prefix in (freeze, cancel):  # cancel_booking has no row saved
        title = labels[f"{prefix}-mode"].split(": ")[1]
        for name in ("enabled", "auto_limit", "max_amount", "approval_valid_minutes"):
            assert labels[f"{prefix}-{name}"].endswith(f": {title}")


def test_each_row_shows_its_tool_as_text_not_a_control(demo, settings):
    """The tool of a row is words («Congelar la cuota», ``freeze_membership``)
    and a hidden field, never a select that could swap which tool it sets."""
    settings.LANGUAGE_CODE = "es"
    _, page = agent_page(demo)
    data = form_data(page, "agent_form")
    freeze = inline_prefix_for(data, "tool_name", "freeze_membership")

    assert f'<select name="{freeze}-tool_name"' not in page
    assert f'type="hidden" name="{freeze}-tool_name" value="freeze_membership"' in page
    assert (
        "<p><strong>Congelar la cuota</strong><br><code>freeze_membership</code></p>"
        in page
    )


def test_a_saved_row_keeps_its_tool_whatever_is_posted(demo, row_counts):
    """A forged post cannot turn the freeze's row into another tool's."""
    url, page = agent_page(demo)
    data = form_data(page, "agent_form")
    freeze = inline_prefix_for(data, "tool_name", "freeze_membership")
    data[f"{freeze}-tool_name"] = "search_foods"
    data[f"{freeze}-mode"] = "auto"
    before = row_counts()

    response = demo.post(url, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    assert AgentToolSetting.objects.get(tool_name="freeze_membership").mode == "auto"
    assert AgentToolSetting.objects.filter(tool_name="search_foods").count() == 1
    assert row_counts() == before


def test_short_headings_carry_their_help(demo, settings):
    settings.LANGUAGE_CODE = "en"
    _, page = agent_page(demo)
    heading = page.split('<th class="column-approval_valid_minutes')[1].split("</th>")[
        0
    ]

    assert "Valid (min)" in heading
    assert 'title="Minutes a request waits for staff&#x27;s decision' in heading


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"secret_key": "sk_live_has spaces in it"}, "no spaces"),
        ({"secret_key": "pk_test_abcdefghijklmnop"}, "sk_live_"),
        ({"kind": "paypal"}, "Select a valid choice"),
    ],
)
def test_bad_integration_input_is_a_form_error_and_saves_nothing(
    demo, row_counts, changes, message, settings
):
    settings.LANGUAGE_CODE = "en"
    stripe = Integration.objects.get(kind="stripe")
    url = f"/admin/tools/integration/{stripe.pk}/change/"
    before = row_counts()
    response = post_changes(demo, url, "integration_form", changes)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert row_counts() == before
    stripe.refresh_from_db()
    assert (stripe.credentials_encrypted, stripe.status) == ("", "disconnected")


@pytest.mark.parametrize("limit", ["-5", "lots"])
def test_bad_limit_is_a_form_error_and_saves_nothing(demo, limit, settings):
    settings.LANGUAGE_CODE = "en"
    url, page = agent_page(demo)
    data = form_data(page, "agent_form")
    prefix = inline_prefix_for(data, "tool_name", "refund_payment")
    data[f"{prefix}-auto_limit"] = limit
    data[f"{prefix}-mode"] = "auto"
    response = demo.post(url, data)
    assert response.status_code == 200
    setting = AgentToolSetting.objects.get(tool_name="refund_payment")
    assert (setting.auto_limit, setting.mode) == (None, "gated")


def test_an_approval_valid_for_no_time_is_a_form_error_and_saves_nothing(
    demo, settings, row_counts
):
    """A request cannot wait zero minutes for staff: 0 was saved, and the
    requests then waited a whole day (the default), which the owner never set."""
    settings.LANGUAGE_CODE = "en"
    url, page = agent_page(demo)
    data = form_data(page, "agent_form")
    prefix = inline_prefix_for(data, "tool_name", "freeze_membership")
    data[f"{prefix}-approval_valid_minutes"] = "0"
    before = row_counts()

    response = demo.post(url, data)

    assert response.status_code == 200
    assert "greater than or equal to 1" in response.content.decode()
    assert row_counts() == before
    setting = AgentToolSetting.objects.get(tool_name="freeze_membership")
    assert setting.approval_valid_minutes == 24 * 60


def test_provider_without_key_is_a_form_error_and_saves_nothing(demo, settings):
    settings.LANGUAGE_CODE = "en"
    settings.OPENAI_API_KEY = ""
    url, page = agent_page(demo)
    data = form_data(page, "agent_form")
    data.update(provider="openai", name="Renamed")
    response = demo.post(url, data)
    assert response.status_code == 200
    assert "OPENAI_API_KEY" in response.content.decode()
    agent = Agent.objects.get()
    assert (agent.provider, agent.name) == ("offline", "Asistente de Gymnasia Demo")


def test_staff_read_agents_but_cannot_change_them(client):
    out = StringIO()
    call_command("seed_demo", stdout=out)
    _, username, password = out.getvalue().splitlines()[1].split(" ")
    client.login(request=HttpRequest(), username=username, password=password)
    agent = Agent.objects.get()
    assert client.get(f"/admin/agents/agent/{agent.pk}/change/").status_code == 200
    response = client.post(f"/admin/agents/agent/{agent.pk}/change/", {"name": "x"})
    assert response.status_code == 403
    assert client.get("/admin/tools/integration/").status_code == 403


@pytest.mark.parametrize(
    "origins",
    [
        "https://gym.example; script-src *",
        "https://gym.example/path",
        "gym.example",
        "javascript:alert(1)",
    ],
)
def test_an_allowed_origin_that_is_not_one_is_a_form_error(demo, origins, settings):
    """Only scheme://host[:port] may be listed: nothing else reaches the widget's
    frame policy or CORS, and nothing is saved."""
    settings.LANGUAGE_CODE = "en"
    url, _ = agent_page(demo)
    kept = Agent.objects.get().allowed_origins

    response = post_changes(demo, url, "agent_form", {"allowed_origins": origins})

    assert response.status_code == 200
    assert "is not an origin like https://gym.example" in response.content.decode()
    assert Agent.objects.get().allowed_origins == kept


def test_allowed_origins_are_stored_as_browsers_send_them(demo):
    url, _ = agent_page(demo)

    response = post_changes(
        demo,
        url,
        "agent_form",
        {"allowed_origins": "HTTPS://Gym.Example/\n\n  http://localhost:8000  "},
    )

    assert response.status_code == 302
    assert Agent.objects.get().origins() == [
        "https://gym.example",
        "http://localhost:8000",
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "greater than or equal to 1"),
        ("501", "less than or equal to 500"),
        ("-3", "greater than or equal to 0"),
        ("muchos", "Enter a whole number"),
    ],
)
def test_a_history_window_out_of_bounds_is_a_form_error_and_saves_nothing(
    demo, value, message, settings
):
    settings.LANGUAGE_CODE = "en"
    url, _ = agent_page(demo)

    response = post_changes(demo, url, "agent_form", {"history_turns": value})

    assert response.status_code == 200
    assert message in response.content.decode()
    assert Agent.objects.get().history_turns == 40


def test_the_owner_sets_how_many_turns_the_model_reads(demo):
    url, page = agent_page(demo)
    assert 'name="history_turns"' in page

    response = post_changes(demo, url, "agent_form", {"history_turns": "12"})

    assert response.status_code == 302
    assert Agent.objects.get().history_turns == 12


def test_the_owner_sets_the_longest_step_in_tokens(demo):
    """An agent starts with room for a reasoning model's thinking (8192 tokens a
    step), and the owner can set another length."""
    assert Agent.objects.get().max_output_tokens == 8192
    url, page = agent_page(demo)
    assert 'name="max_output_tokens"' in page

    response = post_changes(demo, url, "agent_form", {"max_output_tokens": "16000"})

    assert response.status_code == 302
    assert Agent.objects.get().max_output_tokens == 16000


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("255", "greater than or equal to 256"),
        ("128001", "less than or equal to 128000"),
        ("mucho", "Enter a whole number"),
    ],
)
def test_a_longest_step_out_of_bounds_is_a_form_error_and_saves_nothing(
    demo, value, message, settings
):
    settings.LANGUAGE_CODE = "en"
    url, _ = agent_page(demo)

    response = post_changes(demo, url, "agent_form", {"max_output_tokens": value})

    assert response.status_code == 200
    assert message in response.content.decode()
    assert Agent.objects.get().max_output_tokens == 8192
