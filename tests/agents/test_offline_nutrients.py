"""The demo model and the nutrients of several foods in one question ("¿cuántas
calorías tienen el salmón y el pollo?", "compare salmon and chicken"): each looked
for in the catalog, in one step, and each answered from what it returned."""

from __future__ import annotations

import pytest

from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import member_conversation, reply_to
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db

SALMON = "- Salmón a la plancha: 0 g de hidratos de carbono, 20 g de proteínas"
CHICKEN = "- Pechuga de pollo a la plancha: 0 g de hidratos de carbono, 31 g de"


def _searches() -> list[tuple[str, str]]:
    """Each search's query and the step that proposed it, in order."""
    return list(
        ToolCallLog.objects.filter(tool_name="search_foods")
        .order_by("created_at")
        .values_list("arguments__query", "message_key")
    )


@pytest.mark.parametrize(
    "asked",
    [
        "¿Cuántas calorías tienen el salmón y el pollo?",
        "Compara el salmón con el pollo",
        "¿Qué tiene más proteínas, el salmón o el pollo?",
    ],
)
def test_two_foods_asked_about_are_both_looked_for_in_one_step(client, agent, asked):
    """It looked for one food named «salmon pollo», then for the salmon, and
    said nothing of the chicken; a comparison got the list of what it can do."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, asked))

    searches = _searches()
    assert [query for query, _ in searches] == ["salmon", "pollo"]
    assert len({step for _, step in searches}) == 1  # parallel calls of one step
    assert reply.startswith("Según el catálogo del gimnasio:\n")
    assert SALMON in reply
    assert CHICKEN in reply


def test_an_english_comparison_gets_both_foods_figures(client, agent):
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))

    reply = reply_to(send(client, started, "What's healthier, rice or pasta?"))

    assert [query for query, _ in _searches()] == ["rice", "pasta"]
    assert reply.startswith("According to the gym's catalog:\n")
    for food in ("Arroz blanco (cocido)", "Arroz integral (cocido)", "Pasta (cocida)"):
        assert f"- {food}: " in reply
    assert "healthier" not in reply  # figures, never a judgement of its own


def test_a_food_of_several_the_catalog_lacks_is_said_so_beside_the_others(
    client, agent
):
    started = member_conversation(client, agent)

    reply = reply_to(
        send(client, started, "¿Cuántas calorías tienen el salmón y el caviar?")
    )

    assert SALMON in reply
    assert reply.endswith("- «caviar»: no está en el catálogo del gimnasio.")


def test_a_question_about_two_classes_looks_for_no_food(client, agent):
    started = member_conversation(client, agent)

    send(client, started, "¿Qué es mejor, yoga o pilates?")

    assert not ToolCallLog.objects.filter(tool_name="search_foods").exists()


@pytest.mark.parametrize(
    ("asked", "told"),
    [
        (
            "¿Cuántas calorías tiene el té?",
            "No he encontrado ningún alimento que coincida con «té» en el catálogo "
            "del gimnasio.",
        ),
        (
            "¿Cuántas calorías tienen el salmón y el Paté?",
            "- «Paté»: no está en el catálogo del gimnasio.",
        ),
        (
            "¿Cuántas proteínas tiene el pollo al limón?",
            "El catálogo del gimnasio no tiene «pollo limón»; con «pollo» tiene:",
        ),
    ],
)
def test_a_food_not_found_is_named_as_she_wrote_it(client, agent, asked, told):
    """It named «te» and «pate»: her words folded for the search."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, asked))

    assert told in reply
