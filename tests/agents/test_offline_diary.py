"""The demo model and the meal diary: reading a day, its totals, taking an entry
out, and a food logged again told as it is."""

from __future__ import annotations

import datetime
import re

import pytest

from gymnasia.gyms.models import Member
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


def test_remove_a_food_from_the_diary_removes_that_entry(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Añade 150 g de arroz blanco a mi comida")
    send(client, started, "Añade 120 g de plátano a mi merienda")

    reply = reply_to(send(client, started, "Quita el arroz de mi diario"))

    today = business_today(business=agent.business).isoformat()
    assert reply == f"Quitado: 150 g de Arroz blanco (cocido) de la comida del {today}."
    assert [e.food.name for e in MealEntry.objects.all()] == ["Plátano"]


@pytest.mark.parametrize("asked", ["¿Y ahora?", "And now?"])
def test_and_now_after_a_change_reads_that_days_diary_again(client, agent, asked):
    """It answered with what it can do."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 150 g de arroz blanco a mi comida de mañana")
    send(client, started, "Añade 120 g de plátano a mi merienda de mañana")
    send(client, started, "Quita el arroz de mañana")

    reply = reply_to(send(client, started, asked))

    tomorrow = business_today(business=agent.business) + datetime.timedelta(days=1)
    assert reply.startswith(f"Tu diario del {tomorrow.isoformat()}:\n- Merienda: ")
    assert "Plátano, 120 g" in reply and "Arroz" not in reply


def test_remove_a_meal_says_it_in_good_spanish(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Añade 80 g de pan blanco a mi desayuno")

    reply = reply_to(send(client, started, "Borra el desayuno de hoy"))

    today = business_today(business=agent.business).isoformat()
    assert reply == f"Quitado: 80 g de Pan blanco del desayuno del {today}."
    assert not MealEntry.objects.exists()


def test_remove_a_food_not_in_the_diary_removes_nothing(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Añade 120 g de plátano a mi merienda")

    reply = reply_to(send(client, started, "Quita el arroz de mi diario"))

    assert reply == "No encuentro eso en tu diario de ese día."
    assert MealEntry.objects.count() == 1
    assert not ToolCallLog.objects.filter(tool_name="remove_meal_entry").exists()


def test_remove_a_food_named_by_an_alias_finds_it_through_the_catalog(client, agent):
    """Emma logged "chicken"; her diary says "Pechuga de pollo a la plancha"."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    send(client, started, "Add 200 g of chicken to my dinner")
    send(client, started, "Add 100 g of white rice to my dinner")

    reply = reply_to(send(client, started, "Remove the chicken from my diary"))

    assert reply.startswith("Removed: 200 g of Pechuga de pollo a la plancha from ")
    assert [e.food.name for e in MealEntry.objects.all()] == ["Arroz blanco (cocido)"]


def test_yesterdays_diary(client, agent):
    yesterday = business_today(business=agent.business) - datetime.timedelta(days=1)
    MealEntry.objects.create(
        business=agent.business,
        member=Member.objects.get(external_id="socio-1001"),
        date=yesterday,
        meal="dinner",
        food=agent.business.foods.get(name="Manzana"),
        grams=150,
    )
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Qué comí ayer?"))

    assert reply.startswith(f"Tu diario del {yesterday.isoformat()}:")
    assert "- Cena: Manzana, 150 g" in reply


def _the_last(weekday: int, today: datetime.date) -> datetime.date:
    """The last day of that weekday up to today."""
    return today - datetime.timedelta(days=(today.weekday() - weekday) % 7)


@pytest.mark.parametrize(
    ("sub", "asked", "weekday"),
    [
        ("socio-1001", "¿Qué comí el lunes?", 0),
        ("socio-1001", "¿Qué cené el jueves?", 3),
        ("socio-1003", "What did I eat on Monday?", 0),
    ],
)
def test_a_weekday_in_a_question_of_what_she_ate_is_the_last_one(
    client, agent, sub, asked, weekday
):
    """It read the diary of the weekday to come, which holds nothing yet."""
    day = _the_last(weekday, business_today(business=agent.business))
    MealEntry.objects.create(
        business=agent.business,
        member=Member.objects.get(external_id=sub),
        date=day,
        meal="dinner",
        food=agent.business.foods.get(name="Manzana"),
        grams=150,
    )
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, asked))

    assert reply.startswith((f"Tu diario del {day}:", f"Your diary for {day}:"))
    assert "Manzana, 150 g" in reply


@pytest.mark.parametrize(
    ("sub", "said"),
    [
        ("socio-1001", "El lunes cené 150 g de manzana"),
        ("socio-1003", "On Monday I ate 150 g of apple for dinner"),
    ],
)
def test_food_eaten_on_a_weekday_is_logged_on_the_last_one(client, agent, sub, said):
    """It logged the food on the Monday to come."""
    today = business_today(business=agent.business)
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    send(client, started, said)

    entry = MealEntry.objects.get()
    assert (entry.date, entry.meal, entry.grams) == (_the_last(0, today), "dinner", 150)


def test_a_weekday_of_classes_asked_about_is_still_the_next_one(client, agent):
    today = business_today(business=agent.business)
    started = member_conversation(client, agent)

    send(client, started, "¿Qué clases hay el lunes?")

    [asked] = ToolCallLog.objects.filter(tool_name="list_classes")
    ahead = (0 - today.weekday()) % 7
    assert asked.arguments["date_from"] == str(today + datetime.timedelta(days=ahead))


def test_a_meal_with_several_foods_is_asked_about_then_the_grams_said_remove_one(
    client, agent
):
    """ "Quita el desayuno" removed the last food of it."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 100 g de avena a mi desayuno")
    send(client, started, "Añade 50 g de plátano a mi desayuno")

    asked = reply_to(send(client, started, "Quita el desayuno"))

    assert asked == (
        "Hay varias en tu diario: Copos de avena 100 g (Desayuno), Plátano 50 g "
        "(Desayuno). ¿Cuál quito? Dímelo con sus gramos, por ejemplo: «quita 50 g "
        "de Plátano del desayuno»."
    )
    assert MealEntry.objects.count() == 2

    send(client, started, "Quita 50 g de Plátano del desayuno")

    assert [e.food.name for e in MealEntry.objects.all()] == ["Copos de avena"]


def test_a_food_and_a_meal_said_remove_that_food_of_that_meal(client, agent):
    """ "Quita el arroz de la comida" took any food of lunch, or any rice: it
    removed the banana logged after the rice."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 150 g de arroz blanco a mi comida")
    send(client, started, "Añade 120 g de plátano a mi comida")

    reply = reply_to(send(client, started, "Quita el arroz de la comida"))

    assert reply.startswith("Quitado: 150 g de Arroz blanco (cocido) de la comida")
    assert [e.food.name for e in MealEntry.objects.all()] == ["Plátano"]


@pytest.mark.parametrize(
    ("sub", "said", "told"),
    [
        (
            "socio-1001",
            "Quita 50 g del arroz",
            "En tu diario hay 150 g de Arroz blanco (cocido) en la comida, no 50 g. "
            "Una anotación se quita entera: «quita 150 g de Arroz blanco (cocido) de "
            "la comida», y luego añade los gramos que quieras dejar.",
        ),
        (
            "socio-1003",
            "Remove 50 g of the rice",
            "Your diary has 150 g of Arroz blanco (cocido) for lunch, not 50 g. An "
            'entry is removed whole: "remove 150 g of Arroz blanco (cocido) from '
            'lunch", then log the grams you want to keep.',
        ),
    ],
)
def test_part_of_an_entry_to_remove_says_what_is_logged_and_removes_nothing(
    client, agent, sub, said, told
):
    """It said the rice was not in her diary."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, "Add 150 g of white rice to my lunch")

    reply = reply_to(send(client, started, said))

    assert reply == told
    assert MealEntry.objects.get().grams == 150
    assert not ToolCallLog.objects.filter(tool_name="remove_meal_entry").exists()


def test_what_was_eaten_asked_is_still_the_diary(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Qué comí ayer?"))

    yesterday = business_today(business=agent.business) - datetime.timedelta(days=1)
    assert reply == f"No tienes nada anotado el {yesterday.isoformat()}."
    assert not MealEntry.objects.exists()


@pytest.mark.parametrize(
    "sub, asked, told",
    [
        (
            "socio-1001",
            "¿Qué hay en mi diario hoy?",
            "Hoy no tienes nada anotado en el diario.",
        ),
        (
            "socio-1003",
            "What's in my diary today?",
            "Nothing is logged in your diary today.",
        ),
    ],
)
def test_an_empty_diary_of_today_says_today(client, agent, sub, asked, told):
    """It said "that day" of a day she had named as today."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    assert reply_to(send(client, started, asked)) == told


@pytest.mark.parametrize(
    "said",
    [
        "¿Cuántas calorías llevo hoy?",
        "How many calories have I had today?",
        # These got the list of what the assistant can do.
        "¿Cuál es mi total de hoy?",
        "What's my total today?",
    ],
)
def test_the_days_calories_so_far_are_the_diarys(client, agent, said):
    """ "¿Cuántas calorías llevo hoy?" searched the catalog for «llevo»."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 150 g de arroz blanco a mi comida")

    reply = reply_to(send(client, started, said))

    assert reply.endswith("Total: 195 kcal.")


def test_logging_again_what_was_just_removed_is_never_told_as_done(client, agent):
    """R7 answers the repeat with the first entry, which she removed: she hears
    that nothing was done, and why."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 100 g de plátano a mi desayuno")
    send(client, started, "Quita el plátano")

    reply = reply_to(send(client, started, "Añade 100 g de plátano a mi desayuno"))

    assert reply.startswith("No lo he hecho: lo mismo se hizo y se deshizo")
    assert not MealEntry.objects.exists()


def test_a_nutrient_asked_of_the_diary_just_shown_is_its_total(client, agent):
    """ "How much protein is that?" searched the catalog for «that»."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 150 g de arroz blanco a mi comida de ayer")
    send(client, started, "¿Qué comí ayer?")

    reply = reply_to(send(client, started, "¿Cuántas proteínas son?"))

    yesterday = business_today(business=agent.business) - datetime.timedelta(days=1)
    assert reply.startswith(f"Tu diario del {yesterday}:")
    assert reply.endswith("Total: 195 kcal, 4 g de proteínas.")
    assert not ToolCallLog.objects.filter(
        tool_name="search_foods", arguments__query="son"
    ).exists()


def test_the_same_food_logged_twice_is_told_as_already_done(client, agent):
    """The second request is the same action (R7): nothing is done again, and the
    member is not told it failed."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 120 g de plátano a mi merienda")

    reply = reply_to(send(client, started, "Añade 120 g de plátano a mi merienda"))

    assert reply == "Eso ya estaba hecho; no lo he repetido."
    assert MealEntry.objects.count() == 1
    assert ToolCallLog.objects.filter(status="duplicate").count() == 1


def test_figures_are_written_with_her_languages_decimal_mark(client, agent):
    """A Spanish-speaking member read "150.5 g" and "2.7 g": the demo model now
    writes a tool's figures with a decimal comma in Spanish, and the removal it
    suggests in those words finds the entry."""
    started = member_conversation(client, agent)

    logged = reply_to(send(client, started, "Añade 150,5 g de arroz blanco a mi cena"))
    send(client, started, "Añade 50 g de plátano a mi cena")
    listed = reply_to(send(client, started, "¿Qué he comido hoy?"))
    asked = reply_to(send(client, started, "Quita la cena"))

    assert logged.startswith("Anotado: 150,5 g de Arroz blanco (cocido) en la cena")
    assert "- Cena: Arroz blanco (cocido), 150,5 g (" in listed
    assert asked.endswith("«quita 50 g de Plátano de la cena».")
    assert "Arroz blanco (cocido) 150,5 g (Cena)" in asked
    assert MealEntry.objects.count() == 2

    send(client, started, "Quita 150,5 g de Arroz blanco de la cena")

    assert [e.food.name for e in MealEntry.objects.all()] == ["Plátano"]


def test_an_english_speaking_member_reads_a_decimal_point(client, agent):
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))

    logged = reply_to(send(client, started, "Add 150.5 g of white rice to my dinner"))
    listed = reply_to(send(client, started, "What did I eat today?"))

    assert logged.startswith("Logged: 150.5 g of Arroz blanco (cocido) for dinner")
    assert "- Dinner: Arroz blanco (cocido), 150.5 g (" in listed


@pytest.mark.parametrize(
    ("sub", "added", "asked"),
    [
        (
            "socio-1003",
            "Add 100 g of white rice to my dinner",
            "Can you remove the rice from my dinner?",
        ),
        (
            "socio-1001",
            "Añade 100 g de arroz blanco a mi cena",
            "¿Puedes quitar el arroz de la cena?",
        ),
    ],
)
def test_a_removal_asked_politely_removes_that_food(client, agent, sub, added, asked):
    """ "Can you remove the rice …?" looked the catalog up for «can», and found
    nothing to remove."""
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, added)
    send(client, started, "Add 50 g of banana to my dinner")

    send(client, started, asked)

    assert [e.food.name for e in MealEntry.objects.all()] == ["Plátano"]


@pytest.mark.parametrize(
    "asked", ["¿Se ha borrado el arroz de mi diario?", "Was the rice removed?"]
)
def test_asking_whether_a_food_was_taken_out_takes_nothing_out(client, agent, asked):
    """ "¿Se ha borrado el arroz de mi diario?" removed the rice."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 150 g de arroz blanco a mi comida")

    send(client, started, asked)

    assert [e.food.name for e in MealEntry.objects.all()] == ["Arroz blanco (cocido)"]
    assert not ToolCallLog.objects.filter(tool_name="remove_meal_entry").exists()


@pytest.mark.parametrize(
    "asked",
    ["How many calories so far today?", "How many calories today?"],
)
def test_calories_of_a_day_asked_of_no_food_read_that_days_diary(client, agent, asked):
    """ "How many calories so far today?" searched the catalog for "so far"."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    send(client, started, "Put 250 g of chicken in my lunch")

    reply = reply_to(send(client, started, asked))

    today = business_today(business=agent.business).isoformat()
    assert reply.startswith(f"Your diary for {today}:\n- Lunch: Pechuga")
    assert ToolCallLog.objects.filter(tool_name="search_foods").count() == 1


@pytest.mark.parametrize(
    ("said", "told"),
    [
        (
            "Borra todo lo de hoy",
            "Las anotaciones se quitan de una en una. Hay varias en tu diario: ",
        ),
        (
            "Borra todo lo que he comido hoy",
            "Las anotaciones se quitan de una en una. Hay varias en tu diario: ",
        ),
        (
            "Borra lo que he comido hoy",
            "Hay varias en tu diario: ",
        ),
        (
            "Cambia el arroz a 120 g",
            "No puedo cambiar una anotación: quítala y añádela de nuevo, con «quita "
            "100 g de Arroz blanco (cocido) de la comida» y luego «añade 120 g de "
            "Arroz blanco (cocido) a la comida».",
        ),
    ],
)
def test_all_of_a_day_or_an_entry_changed_are_explained_never_half_done(
    client, agent, said, told, row_counts
):
    """ "Borra todo lo de hoy" said it found nothing in a diary of two entries, and
    "cambia el arroz a 120 g" was not understood: no tool takes out a day or
    changes an entry, so it says how, and changes nothing."""
    started = member_conversation(client, agent)
    send(client, started, "Añade 100 g de arroz blanco a la comida")
    send(client, started, "Añade 150 g de pollo a la cena")
    before = row_counts()

    reply = reply_to(send(client, started, said))

    assert reply.startswith(told)
    assert MealEntry.objects.count() == 2
    assert row_counts()["nutrition.MealEntry"] == before["nutrition.MealEntry"]
    assert not ToolCallLog.objects.filter(tool_name="remove_meal_entry").exists()


def test_the_words_suggested_to_change_an_entry_change_it(client, agent):
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    send(client, started, "Add 100 g of white rice to my lunch")
    told = reply_to(send(client, started, "Change the rice to 120 g"))
    remove, add = re.findall(r'"([^"]+)"', told)

    removed = reply_to(send(client, started, remove))
    added = reply_to(send(client, started, add))

    assert removed.startswith("Removed: 100 g of Arroz blanco (cocido) from lunch")
    assert added.startswith("Logged: 120 g of Arroz blanco (cocido) for lunch")
    assert [float(e.grams) for e in MealEntry.objects.all()] == [120]


def test_all_of_a_food_is_that_food_not_the_whole_day(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Añade 100 g de arroz blanco a la comida")
    send(client, started, "Añade 150 g de pollo a la cena")

    reply = reply_to(send(client, started, "Quita todo el arroz"))

    assert reply.startswith("Quitado: 100 g de Arroz blanco (cocido) de la comida")
    assert [e.food.name for e in MealEntry.objects.all()] == [
        "Pechuga de pollo a la plancha"
    ]


def test_everything_she_ate_today_is_removed_one_at_a_time_in_english(client, agent):
    """ "Delete everything I ate today" looked for a food named "ate"."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    send(client, started, "Put 250 g of chicken in my lunch")
    send(client, started, "Put 100 g of white rice in my dinner")

    reply = reply_to(send(client, started, "Delete everything I ate today"))

    assert reply.startswith("Entries are removed one at a time. Your diary has several")
    assert MealEntry.objects.count() == 2


def _logged(agent, sub: str, day: datetime.date, meal: str, food: str, grams: int):
    MealEntry.objects.create(
        business=agent.business,
        member=Member.objects.get(external_id=sub),
        date=day,
        meal=meal,
        food=agent.business.foods.get(name=food),
        grams=grams,
    )


@pytest.mark.parametrize(
    ("sub", "asked", "head", "none"),
    [
        (
            "socio-1001",
            "¿Cuántas calorías llevo esta semana?",
            "Tu diario de esta semana:",
            "nada anotado",
        ),
        (
            "socio-1003",
            "How many calories this week?",
            "Your diary this week:",
            "nothing logged",
        ),
    ],
)
def test_the_week_so_far_is_each_of_its_days_read_at_once(
    client, agent, sub, asked, head, none
):
    """ "How many calories this week?" looked for a food named "week", and
    with "have I had" it read today's diary alone, headed with today's date."""
    today = business_today(business=agent.business)
    monday = today - datetime.timedelta(days=today.weekday())
    _logged(agent, sub, monday, "lunch", "Manzana", 100)
    started = start(client, agent, identity_token=identity(agent, sub=sub))

    reply = reply_to(send(client, started, asked))

    reads = ToolCallLog.objects.filter(tool_name="get_meal_diary")
    days = [monday + datetime.timedelta(days=n) for n in range(today.weekday() + 1)]
    assert sorted(r.arguments["date"] for r in reads) == [str(d) for d in days]
    assert len({r.message_key for r in reads}) == 1  # one step, parallel calls
    lines = reply.split("\n")
    assert lines[0] == head
    assert lines[1] == f"- {monday}: 52 kcal"  # the day's total, as the tool gave it
    assert lines[2:] == [f"- {d}: {none}" for d in days[1:]]
    assert not ToolCallLog.objects.filter(tool_name="search_foods").exists()


def test_last_week_is_its_seven_days(client, agent):
    today = business_today(business=agent.business)
    monday = today - datetime.timedelta(days=today.weekday() + 7)
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Qué comí la semana pasada?"))

    reads = ToolCallLog.objects.filter(tool_name="get_meal_diary")
    assert sorted(r.arguments["date"] for r in reads) == [
        str(monday + datetime.timedelta(days=n)) for n in range(7)
    ]
    assert reply.startswith("Tu diario de la semana pasada:\n")


def test_a_days_entries_are_listed_by_meal_in_the_days_order(client, agent):
    """They came in the order they were logged: lunch, dinner, breakfast."""
    today = business_today(business=agent.business)
    for meal, food in (
        ("lunch", "Manzana"),
        ("dinner", "Kiwi"),
        ("breakfast", "Manzana"),
    ):
        _logged(agent, "socio-1001", today, meal, food, 100)
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Qué he comido hoy?"))

    meals = [line.split(":")[0] for line in reply.split("\n")[1:-1]]
    assert meals == ["- Desayuno", "- Comida", "- Cena"]


def test_a_week_whose_diary_cannot_be_read_says_so_and_no_day_total(client, agent):
    started = member_conversation(client, agent)
    with inject_fault("nutrition", Fault.READS_UNAVAILABLE):
        reply = reply_to(send(client, started, "¿Cuántas calorías llevo esta semana?"))

    assert reply == "El servicio no está disponible ahora mismo."
