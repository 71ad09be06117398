"""The demo model and food: the foods a member asks about and logs, found by any
of their names, in her language, with her own numbers."""

from __future__ import annotations

import datetime

import pytest

from agents.verdict import SENTENCES
from gymnasia.gyms.selectors import business_today
from gymnasia.nutrition.models import MealEntry
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    member_conversation,
    reply_to,
)
from tests.faults import Fault, inject_fault
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def test_food_logged_and_listed_names_the_meal_in_her_language(client, agent):
    started = member_conversation(client, agent)

    logged = reply_to(send(client, started, "Añade 150 g de arroz blanco a mi comida"))
    listed = reply_to(send(client, started, "¿Qué he comido hoy?"))

    today = business_today(business=agent.business).isoformat()
    assert logged == (
        f"Anotado: 150 g de Arroz blanco (cocido) en la comida del {today}."
    )
    assert "- Comida: Arroz blanco (cocido), 150 g (195 kcal)" in listed
    assert listed.endswith("\nTotal: 195 kcal.")  # as the entry says it, not 195.0


def test_an_english_speaking_member_finds_the_catalogs_foods_by_english_names(
    client, agent
):
    """The demo gym's catalog is in Spanish; its English aliases find it."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))

    reply = reply_to(send(client, started, "How many carbs does rice have?"))

    assert "Arroz blanco (cocido): 28" in reply
    assert "Arroz integral (cocido): 23.5" in reply
    assert reply.startswith("According to the gym's catalog:")


def test_negative_grams_are_refused_not_logged_as_positive(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Añade -50 g de arroz blanco a mi cena"))

    assert reply.startswith(SENTENCES["es"]["not_done"])
    assert not MealEntry.objects.exists()
    call = ToolCallLog.objects.get(tool_name="add_food_to_meal")
    assert (call.valid, call.arguments_raw.count("-50")) == (False, 1)


def test_a_food_the_catalog_has_several_of_is_asked_which(client, agent):
    """ "Arroz" is white or brown rice: the demo model logs neither until the
    member names one, and then logs that one."""
    started = member_conversation(client, agent)

    asked = reply_to(send(client, started, "Añade 150 g de arroz a mi desayuno"))

    assert asked == (
        "Hay varios en el catálogo: Arroz blanco (cocido), Arroz integral "
        "(cocido). ¿Cuál anoto? Dímelo con su nombre, por ejemplo: «añade 150 g "
        "de Arroz blanco (cocido) al desayuno»."
    )
    assert not MealEntry.objects.exists()
    assert not ToolCallLog.objects.filter(tool_name="add_food_to_meal").exists()

    send(client, started, "Añade 150 g de arroz integral al desayuno")
    send(client, started, "Add 100 g of Arroz blanco (cocido) to my dinner")

    assert sorted(e.food.name for e in MealEntry.objects.all()) == [
        "Arroz blanco (cocido)",
        "Arroz integral (cocido)",
    ]


def test_an_english_name_of_one_food_logs_it_without_asking(client, agent):
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))

    reply = reply_to(send(client, started, "Add 120 g of brown rice to my lunch"))

    assert reply.startswith("Logged: 120 g of Arroz integral (cocido) for lunch on ")


@pytest.mark.parametrize(
    ("said", "meal", "days"),
    [
        ("Añade 200 g de arroz integral a mi comida de hoy", "lunch", 0),
        ("Apunta 200 g de arroz integral en la cena de mañana", "dinner", 1),
        ("Add 200 g of brown rice for dinner tomorrow", "dinner", 1),
        ("Log 200 g of brown rice for my breakfast on Friday", "breakfast", None),
    ],
)
def test_the_day_and_meal_said_with_a_food_are_not_taken_for_its_name(
    client, agent, said, meal, days
):
    """ "Arroz integral … de hoy" names one food: "hoy", "for" or "Friday" are no
    part of its name, and the demo model logs it without asking which."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))

    send(client, started, said)

    entry = MealEntry.objects.get()
    today = business_today(business=agent.business)
    friday = today + datetime.timedelta(days=(4 - today.weekday()) % 7)
    expected = friday if days is None else today + datetime.timedelta(days=days)
    assert (entry.food.name, entry.meal, entry.date, entry.grams) == (
        "Arroz integral (cocido)",
        meal,
        expected,
        200,
    )


def test_grams_written_out_are_read_as_grams(client, agent):
    """ "100 gramos" was read as "100 gr" and "amos", a food the catalog lacks."""
    started = member_conversation(client, agent)

    send(client, started, "Añade 100 gramos de avena al desayuno de mañana")

    entry = MealEntry.objects.get()
    tomorrow = business_today(business=agent.business) + datetime.timedelta(days=1)
    assert (entry.food.name, entry.meal, entry.date, entry.grams) == (
        "Copos de avena",
        "breakfast",
        tomorrow,
        100,
    )


@pytest.mark.parametrize(
    "said",
    [
        "Tell me the carbs of oats please",
        "What about the protein in oats?",
        "Dime las calorías de la avena, por favor",
    ],
)
def test_the_words_around_a_food_are_not_searched_for(client, agent, said):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert "Copos de avena: 66 g" in reply
    assert ToolCallLog.objects.count() == 1


def test_a_food_named_with_more_words_gives_that_food_only(client, agent):
    """ "Arroz integral" is brown rice: not the other rice, nor brown bread."""
    started = member_conversation(client, agent)

    reply = reply_to(
        send(client, started, "¿Cuántos carbohidratos tiene el arroz integral?")
    )

    assert reply == (
        "Según el catálogo del gimnasio:\n- Arroz integral (cocido): 23,5 g de "
        "hidratos de carbono, 2,6 g de proteínas, 0,9 g de grasas y 112 kcal por "
        "100 g."
    )
    assert ToolCallLog.objects.get().arguments == {"query": "arroz integral"}


def test_a_food_no_name_has_every_word_of_is_looked_for_word_by_word(client, agent):
    """No food has every word of "pollo asado": the catalog is asked for each word
    in turn, and the reply says that it has no "pollo asado" before what it has with
    "pollo". It used to ask for the last word alone, and answered with "Boniato
    asado"."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Cuántas proteínas tiene el pollo asado?"))

    assert reply == (
        "El catálogo del gimnasio no tiene «pollo asado»; con «pollo» tiene:\n"
        "- Pechuga de pollo a la plancha: 0 g de hidratos de carbono, 31 g de "
        "proteínas, 3,6 g de grasas y 165 kcal por 100 g."
    )
    assert [log.arguments for log in ToolCallLog.objects.order_by("created_at")] == [
        {"query": "pollo asado"},
        {"query": "pollo"},
    ]


def test_a_food_no_word_of_finds_says_so_with_every_word_said(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Cuántas calorías tiene el caviar ruso?"))

    assert reply == (
        "No he encontrado ningún alimento que coincida con «caviar ruso» en el "
        "catálogo del gimnasio."
    )
    assert ToolCallLog.objects.count() == 3  # both words, then each


def test_a_food_without_grams_is_asked_for_them(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Añade una manzana a mi merienda"))

    assert reply.startswith("¿Cuántos gramos?")
    assert not ToolCallLog.objects.exists()


@pytest.mark.parametrize(
    ("said", "meal"),
    [
        ("Pon 100 g de avena en el desayuno de mañana", "breakfast"),
        ("Mete 100 g de avena en mi desayuno de mañana", "breakfast"),
        ("Put 100 g of oats in tomorrow's breakfast", "breakfast"),
        ("Quiero añadir 100 g de avena al desayuno de mañana", "breakfast"),
        ("¿Puedes anotar 100 g de avena en el desayuno de mañana?", "breakfast"),
        ("Necesito registrar 100 g de avena en la cena de mañana", "dinner"),
        ("Mañana desayuné 100 g de avena", "breakfast"),
        ("Mañana he cenado 100 g de avena", "dinner"),
        # Grams, a food and a meal, and no verb: what else could it ask?
        ("100 g de avena en la cena de mañana", "dinner"),
        ("Y 100 g de avena para el desayuno de mañana", "breakfast"),
        ("100 g of oats for tomorrow's breakfast", "breakfast"),
    ],
)
def test_a_food_put_in_a_meal_or_eaten_at_one_is_logged(client, agent, said, meal):
    """ "Pon 100 g de avena en el desayuno", and "quiero añadir…" (a request in
    the infinitive), got the list of what the assistant can do; a meal said by its
    verb ("he cenado") is that meal."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    entry = MealEntry.objects.get()
    tomorrow = business_today(business=agent.business) + datetime.timedelta(days=1)
    assert (entry.food.name, entry.grams, entry.meal, entry.date) == (
        "Copos de avena",
        100,
        meal,
        tomorrow,
    )
    assert reply.startswith("Anotado: 100 g de Copos de avena en ")


@pytest.mark.parametrize("said", ["He desayunado 2 huevos", "Anoche cené una manzana"])
def test_a_meal_eaten_without_grams_is_asked_for_them(client, agent, said):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert reply.startswith("¿Cuántos gramos?")
    assert not ToolCallLog.objects.exists()


@pytest.mark.parametrize(
    "said",
    [
        "¿Qué pone en mi desayuno?",
        "¿Qué he desayunado?",
        "What did I have for breakfast today?",
    ],
)
def test_what_is_in_a_meal_asked_is_never_a_food_to_log(client, agent, said):
    started = member_conversation(client, agent)
    send(client, started, "Añade 100 g de avena a mi desayuno")

    reply = reply_to(send(client, started, said))

    assert reply.startswith("Tu diario del ")
    assert "- Desayuno: Copos de avena, 100 g (" in reply
    assert MealEntry.objects.count() == 1


@pytest.mark.parametrize(
    ("sub", "said", "told"),
    [
        ("socio-1001", "¿Y ayer qué cené?", "- Cena: Copos de avena, 100 g ("),
        ("socio-1001", "Ayer, ¿qué cené?", "- Cena: Copos de avena, 100 g ("),
        (
            "socio-1003",
            "And yesterday, what did I have for dinner?",
            "- Dinner: Copos de avena, 100 g (",
        ),
    ],
)
def test_what_she_ate_asked_after_other_words_is_never_a_food_to_log(
    client, agent, sub, said, told
):
    """ "¿Y ayer qué cené?" was asked how many grams."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, "Ayer cené 100 g de avena")

    reply = reply_to(send(client, started, said))

    yesterday = business_today(business=agent.business) - datetime.timedelta(days=1)
    assert told in reply
    assert yesterday.isoformat() in reply
    assert MealEntry.objects.count() == 1


def test_a_class_she_had_is_no_food_to_weigh(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "I had a class yesterday"))

    assert not reply.startswith(("¿Cuántos gramos?", "How many grams?"))
    assert not ToolCallLog.objects.filter(tool_name="add_food_to_meal").exists()


def test_kilos_are_logged_as_grams(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Añade 1,5 kg de pollo a mi cena"))

    assert reply.startswith(
        "Anotado: 1500 g de Pechuga de pollo a la plancha en la cena"
    )
    assert MealEntry.objects.get().grams == 1500


def test_a_schemas_refusal_is_told_in_her_words(client, agent):
    """A schema's refusal reaches her in plain Spanish, from its code, after the
    R10 sentence; never the schema's English (issue 33, point 5)."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Añade 0 g de pan blanco a mi desayuno"))

    assert reply == (
        SENTENCES["es"]["not_done"]
        + "\n\nNo se ha podido: La cantidad tiene que ser mayor que 0 g."
    )


def test_a_failed_change_is_told_in_her_language(client, agent):
    started = member_conversation(client, agent)

    with inject_fault("nutrition", Fault.STORAGE_FAILURE):
        reply = reply_to(
            send(client, started, "Añade 80 g de pan blanco a mi desayuno")
        )

    assert reply == (
        SENTENCES["es"]["not_done"] + "\n\nHa fallado; no se ha cambiado nada."
    )
    assert not MealEntry.objects.exists()


@pytest.mark.parametrize(
    "said",
    [
        "Añade 100 g de arroz blanco a mi cena del 2026-02-30",
        "¿Qué he comido el 2026-13-01?",
    ],
)
def test_a_date_no_calendar_has_is_said_so_never_read_as_today(client, agent, said):
    """ "2026-02-30" was read as no date said: the rice went into today's diary."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, said))

    assert reply.startswith("La fecha 2026-")
    assert "no existe. Dímela de nuevo" in reply
    assert not ToolCallLog.objects.exists()
    assert not MealEntry.objects.exists()


def test_a_number_inside_another_is_not_taken_for_the_grams(client, agent):
    """ "1e5 g" logged 5 g."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "Añade 1e5 g de arroz blanco a mi cena"))

    assert reply.startswith("¿Cuántos gramos?")
    assert not MealEntry.objects.exists()


@pytest.mark.parametrize(
    ("said", "meal"),
    [
        ("He comido 200 g de arroz integral en la comida", "lunch"),
        ("I ate 200 g of brown rice for dinner", "dinner"),
    ],
)
def test_food_said_eaten_with_its_grams_is_logged(client, agent, said, meal):
    started = member_conversation(client, agent)

    send(client, started, said)

    entry = MealEntry.objects.get()
    assert (entry.food.name, entry.meal, entry.grams) == (
        "Arroz integral (cocido)",
        meal,
        200,
    )


@pytest.mark.parametrize(
    "said",
    [
        "¿Cuántas calorías tienen 100 g de avena en el desayuno?",
        "¿Qué tal 100 g de avena para el desayuno?",
        "¿Es bueno tomar 100 g de avena en el desayuno?",
    ],
)
def test_grams_of_a_food_for_a_meal_in_a_question_log_nothing(client, agent, said):
    started = member_conversation(client, agent)

    send(client, started, said)

    assert not MealEntry.objects.exists()
    assert not ToolCallLog.objects.filter(tool_name="add_food_to_meal").exists()


def test_a_question_about_a_meals_grams_logs_nothing(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(
        send(
            client,
            started,
            "¿Cuántas calorías tienen 200 g de arroz integral en la comida?",
        )
    )

    assert "Arroz integral (cocido)" in reply
    assert not MealEntry.objects.exists()


def test_food_without_a_meal_is_asked_about_then_logged_for_the_meal_said(
    client, agent
):
    """It logged it as a snack."""
    started = member_conversation(client, agent)

    asked = reply_to(send(client, started, "Añade 100 g de arroz integral"))

    assert asked == (
        "¿En qué comida lo anoto: desayuno, comida, cena o merienda? Por ejemplo: "
        "«añade 100 g de arroz integral a la comida»."
    )
    assert not MealEntry.objects.exists()

    send(client, started, "Añade 100 g de arroz integral a la comida")

    assert MealEntry.objects.get().meal == "lunch"


@pytest.mark.parametrize(
    ("sub", "said", "told"),
    [
        (
            "socio-1003",
            "I had chicken for dinner, about 200 g",
            "Logged: 200 g of Pechuga de pollo a la plancha for dinner on ",
        ),
        (
            "socio-1001",
            "He cenado pollo, unos 200 g",
            "Anotado: 200 g de Pechuga de pollo a la plancha en la cena del ",
        ),
    ],
)
def test_a_food_named_before_its_grams_is_logged(client, agent, sub, said, told):
    """ "I had oatmeal for breakfast, about 80 g" got the list of what it can do:
    the food was looked for only after the grams."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, said))

    assert reply.startswith(told)
    entry = MealEntry.objects.get()
    assert (entry.meal, entry.grams) == ("dinner", 200)


@pytest.mark.parametrize(
    "asked",
    [
        "Did I log 100 g of chicken for dinner?",
        "Have I had 200 g of chicken today?",
        "¿He anotado 100 g de pollo en la cena?",
    ],
)
def test_asking_whether_a_food_was_logged_logs_nothing_and_reads_the_diary(
    client, agent, asked
):
    """ "Did I log 100 g of chicken for dinner?" logged it."""
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, asked))

    assert not MealEntry.objects.exists()
    assert not ToolCallLog.objects.filter(tool_name="add_food_to_meal").exists()
    assert reply == "Hoy no tienes nada anotado en el diario."


@pytest.mark.parametrize(
    ("sub", "asked"),
    [
        ("socio-1003", "How many calories have I had this week?"),
        ("socio-1001", "¿Cuántas calorías he comido esta semana?"),
    ],
)
def test_how_much_she_has_eaten_reads_her_diary_and_logs_nothing(
    client, agent, sub, asked
):
    """ "How many calories have I had today?" was answered "How many grams?".
    The week's days are each read (today's among them)."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, "Añade 100 g de arroz blanco a la comida")

    reply = reply_to(send(client, started, asked))

    today = business_today(business=agent.business)
    assert f"- {today}: 130 kcal" in reply
    assert MealEntry.objects.count() == 1
    reads = ToolCallLog.objects.filter(tool_name="get_meal_diary")
    assert reads.count() == today.weekday() + 1


@pytest.mark.parametrize(
    ("sub", "logged", "asked", "told"),
    [
        (
            "socio-1001",
            "apunta 150 g de pollo en la comida",
            "¿cuántas proteínas son?",
            "150 g de Pechuga de pollo a la plancha: 247,5 kcal, 46,5 g de proteínas.",
        ),
        (
            "socio-1003",
            "add 150 g of chicken to lunch",
            "how much protein is that?",
            "150 g of Pechuga de pollo a la plancha: 247.5 kcal, 46.5 g of protein.",
        ),
        (
            "socio-1001",
            "apunta 150 g de pollo y 100 g de arroz blanco en la comida",
            "¿y calorías?",
            "150 g de Pechuga de pollo a la plancha: 247,5 kcal.\n"
            "100 g de Arroz blanco (cocido): 130 kcal.",
        ),
    ],
)
def test_the_nutrients_of_what_she_just_logged_are_read_from_her_diary(
    client, agent, sub, logged, asked, told
):
    """She was answered with what the assistant can do, as if never asked."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, logged)
    entries = MealEntry.objects.count()

    reply = reply_to(send(client, started, asked))

    assert reply == told
    [read] = ToolCallLog.objects.filter(tool_name="get_meal_diary")
    assert read.arguments == {
        "date": business_today(business=agent.business).isoformat()
    }
    assert MealEntry.objects.count() == entries


def test_the_nutrients_of_a_food_logged_then_removed_are_not_made_up(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "apunta 150 g de pollo en la comida")
    MealEntry.objects.all().delete()  # removed elsewhere, by the gym's app

    reply = reply_to(send(client, started, "¿cuántas calorías son?"))

    assert reply == (
        "150 g de Pechuga de pollo a la plancha: ya no está en tu diario del "
        f"{business_today(business=agent.business).isoformat()}."
    )
