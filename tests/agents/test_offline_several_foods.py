"""The demo model and several foods in one request ("añade 100 g de arroz blanco
y 150 g de pollo a la cena"): all looked for in one step and logged in the next,
one call each, or none logged while one is not found, not singled out or without
its grams."""

from __future__ import annotations

import pytest

from gymnasia.gyms.selectors import business_today
from gymnasia.nutrition.models import MealEntry
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import member_conversation, reply_to
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("sub", "said", "told"),
    [
        (
            "socio-1001",
            "Añade 100 g de arroz blanco y 150 g de pollo a la comida",
            "Anotado en la comida del {today}: 100 g de Arroz blanco (cocido) y "
            "150 g de Pechuga de pollo a la plancha.",
        ),
        (
            "socio-1003",
            "I had 200 g of white rice and 150 g of chicken for lunch",
            "Logged for lunch on {today}: 200 g of Arroz blanco (cocido) and "
            "150 g of Pechuga de pollo a la plancha.",
        ),
    ],
)
def test_two_foods_in_one_request_are_both_logged_in_parallel_calls(
    client, agent, sub, said, told
):
    """ "Añade 100 g de arroz blanco y 150 g de pollo" was answered "tell me them
    one at a time". Both foods are looked for in one step and logged in the next,
    two calls in each."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, said))

    today = business_today(business=agent.business).isoformat()
    assert reply == told.format(today=today)
    assert sorted(
        (e.food.name, e.grams, e.meal, e.date.isoformat())
        for e in MealEntry.objects.all()
    ) == [
        ("Arroz blanco (cocido)", 100 if sub == "socio-1001" else 200, "lunch", today),
        ("Pechuga de pollo a la plancha", 150, "lunch", today),
    ]
    for tool in ("search_foods", "add_food_to_meal"):
        calls = ToolCallLog.objects.filter(tool_name=tool)
        assert calls.count() == 2
        assert len({c.message_key for c in calls}) == 1  # one step, two calls


def test_three_foods_in_one_request_are_all_logged(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(
        send(
            client,
            started,
            "He cenado 100 g de arroz integral, 120 g de salmón y 80 g de brócoli",
        )
    )

    assert sorted(e.food.name for e in MealEntry.objects.filter(meal="dinner")) == [
        "Arroz integral (cocido)",
        "Brócoli",
        "Salmón a la plancha",
    ]
    assert ", 120 g de Salmón a la plancha y 80 g de Brócoli." in reply


@pytest.mark.parametrize(
    ("said", "told"),
    [
        (
            "I had 200 g of rice and 100 g of chicken for lunch",
            'The catalog has several "rice": Arroz blanco (cocido), Arroz integral '
            "(cocido). I have logged nothing: tell me again with its name, for "
            'example: "add 200 g of Arroz blanco (cocido) and 100 g of chicken to '
            'my lunch".',
        ),
        (
            "Añade 100 g de arroz blanco y 50 g de kriptonita a la cena",
            "No he encontrado «kriptonita» en el catálogo; no he anotado nada.",
        ),
        (
            "Añade 100 g de arroz blanco y 150 g de pollo",
            "¿En qué comida los anoto: desayuno, comida, cena o merienda?",
        ),
    ],
)
def test_several_foods_with_one_not_singled_out_log_none_of_them(
    client, agent, said, told
):
    """Never a guess, and never half a request unsaid: a food the catalog has
    several of, or none of, or no meal said, and nothing is logged."""
    sub = "socio-1003" if said.startswith("I ") else "socio-1001"
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, said))

    assert reply == told
    assert not MealEntry.objects.exists()
    assert not ToolCallLog.objects.filter(tool_name="add_food_to_meal").exists()


def test_one_of_two_foods_refused_is_told_beside_the_one_logged(client, agent):
    """The refused one is the last call of the tool in the turn: R10's sentence
    comes first."""
    started = member_conversation(client, agent)

    reply = reply_to(
        send(client, started, "Añade 100 g de arroz blanco y -50 g de pollo a la cena")
    )

    [entry] = MealEntry.objects.all()
    assert (entry.food.name, entry.grams) == ("Arroz blanco (cocido)", 100)
    today = business_today(business=agent.business).isoformat()
    assert reply.startswith(
        "No he podido hacer el cambio que pediste.\n\n"
        f"Anotado en la cena del {today}: 100 g de Arroz blanco (cocido). "
        "Pechuga de pollo a la plancha: No se ha podido: "
    )


@pytest.mark.parametrize(
    ("sub", "said", "asked", "grams", "told"),
    [
        (
            "socio-1001",
            "He desayunado 60 g de avena y un plátano",
            "¿Cuántos gramos de Plátano? No he anotado nada todavía.",
            "120 g",
            "Anotado en el desayuno del {today}: 60 g de Copos de avena y 120 g de "
            "Plátano.",
        ),
        (
            "socio-1003",
            "I had 60 g of oats and a banana for breakfast",
            "How many grams of Plátano? I have logged nothing yet.",
            "120 g",
            "Logged for breakfast on {today}: 60 g of Copos de avena and 120 g of "
            "Plátano.",
        ),
    ],
)
def test_a_food_said_without_grams_beside_one_with_them_is_asked_for_them(
    client, agent, sub, said, asked, grams, told
):
    """ "He desayunado 60 g de avena y un plátano" logged the oats and said
    nothing of the banana."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    question = reply_to(send(client, started, said))

    assert question == asked
    assert not MealEntry.objects.exists()

    reply = reply_to(send(client, started, grams))

    today = business_today(business=agent.business).isoformat()
    assert reply == told.format(today=today)
    assert sorted((e.food.name, e.grams) for e in MealEntry.objects.all()) == [
        ("Copos de avena", 60),
        ("Plátano", 120),
    ]


def test_a_second_food_without_grams_is_never_read_as_part_of_the_first(client, agent):
    """ "Añade 100 g de arroz blanco y pollo a la cena" looked for one food named
    with all those words."""
    started = member_conversation(client, agent)

    reply = reply_to(
        send(client, started, "Añade 100 g de arroz blanco y pollo a la cena")
    )

    assert reply == (
        "¿Cuántos gramos de Pechuga de pollo a la plancha? No he anotado nada todavía."
    )
    assert not MealEntry.objects.exists()


def test_grams_of_no_food_in_a_request_for_several_are_asked_about(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Añade 100 g y 150 g de pollo a la cena"))

    assert reply.startswith("Dime cada alimento con sus gramos")
    assert not ToolCallLog.objects.exists()


def test_a_food_named_before_its_grams_beside_another_is_logged_with_them(
    client, agent
):
    started = member_conversation(client, agent)

    send(client, started, "He cenado pollo, unos 200 g, y 100 g de arroz blanco")

    assert sorted((e.food.name, e.grams) for e in MealEntry.objects.all()) == [
        ("Arroz blanco (cocido)", 100),
        ("Pechuga de pollo a la plancha", 200),
    ]
