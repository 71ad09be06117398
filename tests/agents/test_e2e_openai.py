"""The demo's scenario end to end through the real OpenAI SDK and a scripted fake of
the Responses API: the API, the turn, the adapter, the dispatcher, the catalog."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from agents.models import Agent
from tests.fakes.llm_server import Step, running_fake_llm
from tests.faults import Fault, inject_fault

pytestmark = pytest.mark.django_db


def answer_from_results(body):
    """The scripted model's second step: it writes only what the tool returned."""
    outputs = [
        item for item in body["input"] if item.get("type") == "function_call_output"
    ]
    result = json.loads(outputs[-1]["output"])
    if result["status"] == "ok":
        lines = [
            f"{food['name']}: {food['per_100g']['carbohydrates_g']} g de hidratos por 100 g."
            for food in result["foods"]
        ]
        return Step(text=" ".join(lines))
    if result["status"] == "no_results":
        return Step(text="No hay ningún alimento con ese nombre en el catálogo.")
    return Step(text="El catálogo no está disponible ahora mismo.")


@pytest.fixture
def fake(settings, monkeypatch):
    with running_fake_llm() as fake:
        settings.OPENAI_API_KEY = "sk-test"
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.base_url}/v1")
        call_command(
            "seed_demo", provider="openai", model="gpt-test", stdout=StringIO()
        )
        yield fake


def ask(client, text):
    agent = Agent.objects.get()
    started = client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key},
        content_type="application/json",
    ).json()
    response = client.post(
        f"/api/v1/conversations/{started['conversation']}/messages",
        {"text": text},
        content_type="application/json",
        headers={"Authorization": f"Bearer {started['token']}"},
    )
    return response.json()["messages"][-1]["text"]


def script(fake, query):
    """First a search, then an answer written from the search's result."""

    def model(body):
        if any(item.get("type") == "function_call_output" for item in body["input"]):
            return answer_from_results(body)
        return Step(tool_calls=[("call_search", "search_foods", {"query": query})])

    fake.script("openai", model)


def test_carbohydrates_of_rice_through_the_openai_sdk(client, fake):
    script(fake, "arroz")
    reply = ask(client, "¿Cuántos carbohidratos tiene el arroz?")
    assert "Arroz blanco (cocido): 28 g de hidratos por 100 g." in reply
    assert "Arroz integral (cocido): 23.5 g de hidratos por 100 g." in reply
    first, second = fake.requests["openai"]
    offered = {tool["name"] for tool in first.body["tools"]}
    assert offered == {"search_foods", "list_classes", "handoff_to_staff"}
    [output] = [
        i for i in second.body["input"] if i.get("type") == "function_call_output"
    ]
    assert output["call_id"] == "call_search"
    assert json.loads(output["output"])["foods"][0]["name"] == "Arroz blanco (cocido)"


def test_no_match_is_said_through_the_openai_sdk(client, fake):
    script(fake, "caviar")
    reply = ask(client, "¿Cuántas calorías tiene el caviar?")
    assert reply == "No hay ningún alimento con ese nombre en el catálogo."


def test_an_unavailable_catalog_is_said_through_the_openai_sdk(client, fake):
    script(fake, "arroz")
    with inject_fault("nutrition", Fault.UNAVAILABLE):
        reply = ask(client, "¿Cuántos carbohidratos tiene el arroz?")
    assert reply == "El catálogo no está disponible ahora mismo."
    assert not any(ch.isdigit() for ch in reply)
