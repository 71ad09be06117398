"""The demo model and foods: a food's figures from one search, logging a food
with the «¿cuál?» question, «otros 100 g», and the day's diary."""

from __future__ import annotations

import pytest

from gymnasia.gyms.selectors import business_today
from gymnasia.nutrition.models import MealEntry
from tests.agents.offline_kit import calls, member_conversation, on, talk
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db

WHICH = "¿Cuál: Arroz blanco (cocido) o Arroz integral (cocido)?"


def test_rice_carbohydrates_are_the_catalogs_from_one_search(client, agent):
    [reply] = talk(
        client,
        member_conversation(client, agent),
        "¿Cuántos carbohidratos tiene el arroz?",
    )

    assert calls() == [("search_foods", {"query": "arroz"})]
    assert reply.startswith("Según el catálogo del gimnasio:\n")
    assert "- Arroz blanco (cocido): 28 g de hidratos de carbono, 2,7 g" in reply
    assert "- Arroz integral (cocido): 23,5 g de hidratos de carbono" in reply


def test_an_english_member_reads_the_figures_in_english(client, agent):
    started = member_conversation(client, agent, sub="socio-1003")

    [reply] = talk(client, started, "How many carbs has the rice?")

    assert "Arroz blanco (cocido): 28 g of carbohydrates, 2.7 g of protein" in reply


def test_another_food_after_a_food_is_the_same_question(client, agent):
    started = member_conversation(client, agent)

    _, reply = talk(
        client, started, "¿Cuántas calorías tiene el pollo?", "¿Y el arroz?"
    )

    assert calls()[-1] == ("search_foods", {"query": "arroz"})
    assert "Arroz blanco (cocido): 28 g" in reply


def test_a_food_not_in_the_catalog_is_said_so_with_no_figure(client, agent):
    [reply] = talk(
        client, member_conversation(client, agent), "¿Cuántas calorías tiene el caviar?"
    )

    assert reply == (
        "No he encontrado ningún alimento que coincida con «caviar» en el catálogo "
        "del gimnasio."
    )


def test_logging_rice_asks_which_then_logs_the_one_she_chose(client, agent):
    started = member_conversation(client, agent)
    today = business_today(business=agent.business).isoformat()

    asked = talk(client, started, "Apúntame 100 g de arroz en la comida")
    assert asked == [WHICH]
    assert not MealEntry.objects.exists()

    [told] = talk(client, started, "el blanco")

    entry = MealEntry.objects.get()
    assert (entry.food.name, entry.grams, entry.meal) == (
        "Arroz blanco (cocido)",
        100,
        "lunch",
    )
    assert (
        told == f"Anotado: 100 g de Arroz blanco (cocido) en la comida del {on(today)}."
    )
    assert ToolCallLog.objects.get(tool_name="add_food_to_meal").verification == (
        "verified"
    )


def test_another_subject_instead_of_the_answer_logs_nothing(client, agent):
    started = member_conversation(client, agent)

    _, reply = talk(
        client, started, "Apúntame 100 g de arroz en la comida", "¿Qué clases tengo?"
    )

    assert not MealEntry.objects.exists()
    assert calls()[-1] == ("list_my_bookings", {})
    assert reply != WHICH


def test_otros_100_g_logs_the_same_food_again_as_a_second_entry(client, agent):
    started = member_conversation(client, agent)
    talk(client, started, "Apúntame 100 g de arroz blanco en la comida")

    [told] = talk(client, started, "otros 100 g")

    assert MealEntry.objects.count() == 2  # not told as a duplicate of the first
    logged = ToolCallLog.objects.filter(tool_name="add_food_to_meal")
    assert [call.status for call in logged] == ["ok", "ok"]
    assert told.startswith("Anotado: 100 g de Arroz blanco (cocido) en la comida")


def test_the_days_diary_lists_what_was_logged_with_its_total(client, agent):
    started = member_conversation(client, agent)
    today = business_today(business=agent.business).isoformat()

    empty, _, diary = talk(
        client,
        started,
        "¿Qué he comido hoy?",
        "Apúntame 100 g de arroz blanco en la cena",
        "¿Qué he comido hoy?",
    )

    assert empty == "Hoy no tienes nada anotado en el diario."
    assert diary == (
        f"Tu diario del {on(today)}:\n- Cena: Arroz blanco (cocido), 100 g (130 kcal)\n"
        "Total: 130 kcal."
    )


def test_a_meal_not_said_is_asked_for(client, agent):
    started = member_conversation(client, agent)

    asked, told = talk(
        client, started, "Apúntame 50 g de arroz blanco", "en el desayuno"
    )

    assert asked.startswith("¿En qué comida lo anoto")
    assert told.startswith("Anotado: 50 g de Arroz blanco (cocido) en el desayuno")
    assert MealEntry.objects.get().meal == "breakfast"
