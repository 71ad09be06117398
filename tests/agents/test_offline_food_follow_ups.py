"""The demo model and food across turns: what a member says after its question
(the food, the grams), after a food asked about ("add that", "añade 120 g a la
merienda"), or after a food logged ("y 200 g de arroz blanco"), logged as she
meant it, and nothing when nothing was meant."""

from __future__ import annotations

import datetime

import pytest

from gymnasia.gyms.selectors import business_today
from gymnasia.nutrition.models import MealEntry
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    member_conversation,
    reply_to,
)
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def test_grams_of_the_food_just_asked_about_log_that_food(client, agent):
    """ "Añade 120 g a la merienda" right after asking about the banana got the
    list of what the assistant can do."""
    started = member_conversation(client, agent)
    send(client, started, "¿Cuántas calorías tiene el plátano?")

    reply = reply_to(send(client, started, "Añade 120 g a la merienda"))

    entry = MealEntry.objects.get()
    assert (entry.food.name, entry.grams, entry.meal) == ("Plátano", 120, "snack")
    assert reply.startswith("Anotado: 120 g de Plátano en la merienda del ")


def test_grams_after_several_foods_asked_about_ask_which(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "¿Cuántas proteínas tiene el huevo?")

    reply = reply_to(send(client, started, "Apunta 100 g en la cena"))

    assert reply == (
        "Hay varios en el catálogo: Clara de huevo, Huevo entero. ¿Cuál anoto? "
        "Dímelo con su nombre, por ejemplo: «añade 100 g de Clara de huevo a la "
        "cena»."
    )
    assert not MealEntry.objects.exists()


@pytest.mark.parametrize(
    ("sub", "asked", "chosen", "food"),
    [
        (
            "socio-1001",
            "Añade 100 g de huevo a la cena de mañana",
            "el entero",
            "Huevo entero",
        ),
        (
            "socio-1003",
            "I had 100 g of rice for dinner tomorrow",
            "white rice",
            "Arroz blanco (cocido)",
        ),
    ],
)
def test_the_food_she_chooses_when_asked_which_is_logged_as_she_asked(
    client, agent, sub, asked, chosen, food
):
    """Her answer to "which one shall I log?" got the list of what the assistant
    can do: it is the food, logged with the grams, meal and day of her request."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, asked)
    assert not MealEntry.objects.exists()

    send(client, started, chosen)

    entry = MealEntry.objects.get()
    tomorrow = business_today(business=agent.business) + datetime.timedelta(days=1)
    assert (entry.food.name, entry.grams, entry.meal, entry.date) == (
        food,
        100,
        "dinner",
        tomorrow,
    )


@pytest.mark.parametrize(
    ("sub", "asked", "grams", "chosen", "food"),
    [
        (
            "socio-1001",
            "Quiero añadir arroz a la cena de mañana",
            "200 g",
            "el integral",
            "Arroz integral (cocido)",
        ),
        (
            "socio-1003",
            "I want to add rice to my dinner tomorrow",
            "200 g",
            "the brown one",
            "Arroz integral (cocido)",
        ),
    ],
)
def test_the_food_chosen_after_giving_the_grams_is_logged_as_she_asked(
    client, agent, sub, asked, grams, chosen, food
):
    """Asked for the grams, then which food: her answer to the second question
    got the list of what the assistant can do, since the meal and day were in her
    request two messages back."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, asked)
    which = reply_to(send(client, started, grams))
    assert which.startswith(("Hay varios en el catálogo", "The catalog has several"))

    reply = reply_to(send(client, started, chosen))

    entry = MealEntry.objects.get()
    tomorrow = business_today(business=agent.business) + datetime.timedelta(days=1)
    assert (entry.food.name, entry.grams, entry.meal, entry.date) == (
        food,
        200,
        "dinner",
        tomorrow,
    )
    assert reply.startswith(("Anotado: 200 g de", "Logged: 200 g of"))


def test_a_food_chosen_after_grams_for_nothing_asked_logs_nothing(client, agent):
    """ "200 g" that answered no question, then a food's name: nothing was asked
    to be logged, so nothing is."""
    started = member_conversation(client, agent)
    send(client, started, "¿Cuántas calorías tiene el arroz?")
    send(client, started, "200 g")

    send(client, started, "el integral")

    assert not MealEntry.objects.exists()
    assert not ToolCallLog.objects.filter(tool_name="add_food_to_meal").exists()


def test_thanks_after_being_asked_which_food_logs_nothing(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Añade 50 g de arroz a la comida")

    reply = reply_to(send(client, started, "Gracias"))

    assert reply == "¡De nada! ¿Algo más?"
    assert not MealEntry.objects.exists()
    assert not ToolCallLog.objects.filter(tool_name="add_food_to_meal").exists()


@pytest.mark.parametrize(
    ("sub", "asked", "added", "food", "grams", "meal"),
    [
        (
            "socio-1001",
            "¿Cuántas calorías tienen 150 g de arroz blanco?",
            "Añádelo a la comida",
            "Arroz blanco (cocido)",
            150,
            "lunch",
        ),
        (
            "socio-1003",
            "How many calories in 100g of oats?",
            "add that to my snack",
            "Copos de avena",
            100,
            "snack",
        ),
    ],
)
def test_add_that_after_a_food_asked_about_with_grams_logs_those_grams(
    client, agent, sub, asked, added, food, grams, meal
):
    """ "Add that to my snack" after asking about 100 g of oats asked her how
    many grams."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, asked)

    send(client, started, added)

    entry = MealEntry.objects.get()
    assert (entry.food.name, entry.grams, entry.meal) == (food, grams, meal)


@pytest.mark.parametrize(
    ("sub", "asked", "grams"),
    [
        ("socio-1001", "Añade una manzana a mi merienda", "150 gramos"),
        ("socio-1003", "I ate an apple for my snack", "150 g"),
    ],
)
def test_the_grams_she_gives_when_asked_log_the_food_she_asked_for(
    client, agent, sub, asked, grams
):
    """ "150 g", her answer to "how many grams?", got the list of what the
    assistant can do; "I ate an apple" was not understood at all."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    question = reply_to(send(client, started, asked))
    send(client, started, grams)

    assert question.startswith(("¿Cuántos gramos?", "How many grams?"))
    entry = MealEntry.objects.get()
    assert (entry.food.name, entry.grams, entry.meal) == ("Manzana", 150, "snack")


@pytest.mark.parametrize(
    ("sub", "asked"),
    [
        ("socio-1001", "Añade 200 ml de leche al desayuno"),
        ("socio-1001", "He desayunado un vaso de leche"),
        ("socio-1003", "I had a glass of milk for breakfast"),
    ],
)
def test_a_food_said_by_another_measure_is_asked_in_grams_then_logged(
    client, agent, sub, asked
):
    """Given the grams, it looked for a food named "ml"."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    question = reply_to(send(client, started, asked))
    send(client, started, "200 g")

    assert question.startswith(("¿Cuántos gramos?", "How many grams?"))
    entry = MealEntry.objects.get()
    assert (entry.food.name, entry.grams, entry.meal) == (
        "Leche semidesnatada",
        200,
        "breakfast",
    )


def test_grams_given_for_a_food_of_no_meal_said_ask_for_the_meal(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "He comido arroz")

    reply = reply_to(send(client, started, "200 g"))

    assert reply.startswith("¿En qué comida lo anoto:")
    assert not MealEntry.objects.exists()


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("Añade 150 g de salmón a mi cena de mañana", "y 200 g de arroz blanco"),
        ("Add 150 g of salmon to my dinner tomorrow", "and 200 g of white rice"),
    ],
)
def test_another_food_said_after_one_logged_goes_to_the_same_meal(
    client, agent, first, then
):
    started = member_conversation(client, agent)
    send(client, started, first)

    send(client, started, then)

    tomorrow = business_today(business=agent.business) + datetime.timedelta(days=1)
    assert [
        (e.food.name, e.meal, e.date, e.grams) for e in MealEntry.objects.all()
    ] == [
        ("Salmón a la plancha", "dinner", tomorrow, 150),
        ("Arroz blanco (cocido)", "dinner", tomorrow, 200),
    ]


def test_and_grams_with_nothing_logged_before_logs_nothing(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "¿Qué clases hay mañana?")

    send(client, started, "y 200 g de arroz blanco")

    assert not MealEntry.objects.exists()


def test_how_many_calories_is_that_with_nothing_shown_searches_nothing(client, agent):
    started = member_conversation(client, agent)

    send(client, started, "How many calories is that?")

    assert not ToolCallLog.objects.exists()


@pytest.mark.parametrize(
    ("sub", "first", "then", "told"),
    [
        (
            "socio-1003",
            "How much protein is in 200 g of chicken?",
            "and in 150 g of rice?",
            "- Arroz blanco (cocido): 28 g of carbohydrates",
        ),
        (
            "socio-1001",
            "¿Cuántas proteínas tiene el pollo?",
            "¿Y el arroz?",
            "- Arroz blanco (cocido): 28 g de hidratos de carbono",
        ),
    ],
)
def test_another_food_after_a_foods_nutrients_gets_that_foods(
    client, agent, sub, first, then, told
):
    """ "And in 150 g of rice?" right after the chicken's nutrients got the list
    of what the assistant can do."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, first)

    reply = reply_to(send(client, started, then))

    assert told in reply
    assert "Pechuga" not in reply
    assert not MealEntry.objects.exists()


def test_thanks_after_a_foods_nutrients_looks_for_no_food(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "¿Cuántas calorías tiene el plátano?")

    reply = reply_to(send(client, started, "Y gracias"))

    assert reply == "¡De nada! ¿Algo más?"
    assert ToolCallLog.objects.filter(tool_name="search_foods").count() == 1


def test_another_food_after_one_logged_is_not_taken_for_a_question(client, agent):
    """After a food was logged, "¿y el arroz?" says neither its grams nor its
    meal: nothing is logged or looked up on a guess."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 120 g de plátano a la merienda")

    send(client, started, "¿Y el arroz?")

    assert [e.food.name for e in MealEntry.objects.all()] == ["Plátano"]
    searched = ToolCallLog.objects.filter(tool_name="search_foods")
    assert [log.arguments["query"] for log in searched] == ["platano"]
