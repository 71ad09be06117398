"""Foods and the meal diary: a food's nutrients from the catalog, logging a food
(asking which one when several match, and for the meal when none is said),
"otros 100 g", and reading a day's diary."""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from agents.providers.offline.core import (
    Reply,
    Rule,
    Turn,
    by_place,
    day_written,
    figure,
    fold,
    outcome,
    read_failed,
    said_any,
)
from agents.providers.offline.dates import MONTHS, WEEKDAYS, day_named

NUTRIENTS = (
    r"carbohidratos?|hidratos|calorias|kcal|proteinas?|grasas?|nutrientes|carbs?"
    r"|carbohydrates?|calories|protein|fats?|nutrients|azucar|sugar"
)
GRAMS = re.compile(r"\b(\d+(?:[.,]\d+)?)\s*(?:g|gr|gramos|grams)\b")
MEALS = {
    "breakfast": r"desayuno|desayunar|breakfast",
    "lunch": r"comida|almuerzo|lunch",
    "dinner": r"cena|cenar|dinner",
    "snack": r"merienda|tentempie|snack",
}
LOG = r"apunta\w*|anota\w*|registra\w*|añade|anade|pon|ponme|log|add|he comido|i had|i ate"
AGAIN = r"otros|otra vez|again|another|more|mas"
DIARY = r"diario|diary|he comido|comi|what did i eat|have i eaten|llevo|so far"
#: Words of a request that are not the food's name.
NOT_FOOD = set(
    (
        "cuantos cuantas cuanto cuanta que cual tiene tienen hay de del el la los "
        "las un una en a al y mi me para por favor dime quiero how many much what "
        "is are has have does do the of in for to my me please tell a an and with "
        "g gr gramos grams apuntame anota anotame apunta registra anade pon ponme "
        "log add hoy today manana tomorrow ayer comida almuerzo desayuno cena "
        "merienda breakfast lunch dinner snack hola hi hello hey buenas buenos "
        "dias one uno el la"
    ).split()
)


#: Words that name a day, never a food ("el lunes", "de agosto").
DAY_WORDS = {*WEEKDAYS, *MONTHS, "que", "viene", "next", "pasado", "yesterday"}


def food_words(said: str) -> str:
    """What a message names as a food, the other words of the request left out."""
    said = re.sub(rf"\b(?:{NUTRIENTS})\b|\d+(?:[.,]\d+)?", " ", said)
    return " ".join(w for w in said.split() if w not in NOT_FOOD | DAY_WORDS)


def meal_named(said: str) -> str | None:
    return next((meal for meal, words in MEALS.items() if said_any(said, words)), None)


#: Each meal after a food logged ("en la comida", "for lunch") and heading a
#: line ("Comida").
MEAL_SAID = {
    "breakfast": (gettext_lazy("for breakfast"), gettext_lazy("Breakfast")),
    "lunch": (gettext_lazy("for lunch"), gettext_lazy("Lunch")),
    "dinner": (gettext_lazy("for dinner"), gettext_lazy("Dinner")),
    "snack": (gettext_lazy("for a snack"), gettext_lazy("Snack")),
}


def meal_said(meal: str, heading: bool = False) -> str:
    return str(MEAL_SAID[meal][heading]) if meal in MEAL_SAID else meal


def nutrients(turn: Turn) -> Reply | None:
    """A food's nutrients: one search, then the catalog's figures per 100 g."""
    query = turn.state.get("query") or food_words(turn.said)
    if not query:
        return Reply(_("Which food do you mean?"))
    result = turn.result("search_foods")
    if result is None:
        return turn.call("nutrients", "search_foods", {"query": query}, query=query)
    if result.get("status") == "no_results":
        return Reply(
            _("I found no food matching “%(food)s” in the gym's catalog.")
            % {"food": query},
            state={"rule": "nutrients"},
        )
    if result.get("status") != "ok":
        return Reply(
            _("I cannot reach the food catalog right now.") + " " + read_failed(result)
        )
    lines = [
        _(
            "- %(name)s: %(carbs)s g of carbohydrates, %(protein)s g of protein, "
            "%(fat)s g of fat and %(kcal)s kcal per 100 g."
        )
        % {
            "name": food["name"],
            "carbs": figure(food["per_100g"]["carbohydrates_g"]),
            "protein": figure(food["per_100g"]["protein_g"]),
            "fat": figure(food["per_100g"]["fat_g"]),
            "kcal": figure(food["per_100g"]["kcal"]),
        }
        for food in result["foods"]
    ]
    text = _("According to the gym's catalog:") + "\n" + "\n".join(lines)
    return Reply(text, state={"rule": "nutrients"})


def another_food(turn: Turn) -> Reply | None:
    """ "¿Y el arroz integral?" right after a food's nutrients: the same question."""
    return nutrients(turn) if turn.asked.get("rule") == "nutrients" else None


def log_food(turn: Turn) -> Reply | None:
    """Log grams of a food in a meal: search it, ask which one or for what is
    missing, then add it; the entry told as the tool verified it."""
    asked = turn.asked.get("want") if turn.answering else None
    want = dict(turn.state.get("want") or asked or {})
    if turn.result("add_food_to_meal") is not None:
        return Reply(logged(turn.result("add_food_to_meal") or {}))
    if not turn.done:
        before = repr(want)
        want = _wanted(turn, want)
        if asked and repr(want) == before:
            return None  # not an answer to its question: another subject
    if not want.get("query"):
        return Reply(_("Which food do you want me to log?"))
    searched = turn.result("search_foods")
    if "options" not in want:
        if searched is None:
            return turn.call("log", "search_foods", {"query": want["query"]}, want=want)
        if searched.get("status") != "ok":
            return Reply(_no_food(want["query"], searched))
        want["options"] = [[f["food_id"], f["name"]] for f in searched["foods"]]
    options = want["options"]
    if len(options) > 1:
        names = [name for _id, name in options]
        text = _("Which one: %(options)s?") % {"options": _(" or ").join(names)}
        return Reply(text, state={"rule": "log", "want": want})
    if "meal" not in want:
        text = _("Which meal do I log it in: breakfast, lunch, dinner or snack?")
        return Reply(text, state={"rule": "log", "want": want})
    if "grams" not in want:
        return Reply(_("How many grams?"), state={"rule": "log", "want": want})
    arguments = {
        "date": want.get("date") or turn.today.isoformat(),
        "meal": want["meal"],
        "food_id": options[0][0],
        "grams": want["grams"],
    }
    return turn.call("log", "add_food_to_meal", arguments)


def _wanted(turn: Turn, want: dict[str, Any]) -> dict[str, Any]:
    """What the message adds to a food to log: its grams, meal, day, or which of
    the foods offered ("el blanco")."""
    if grams := GRAMS.search(turn.said):
        want["grams"] = float(grams[1].replace(",", "."))
    if meal := meal_named(turn.said):
        want["meal"] = meal
    if day := day_named(turn.said, turn.today):
        want["date"] = day.isoformat()
    words = food_words(turn.said).split()
    if "options" in want and (placed := by_place(turn.said, want["options"])):
        want["options"] = [placed]
    elif "options" in want and words:
        chosen = [o for o in want["options"] if all(w in fold(o[1]) for w in words)]
        if chosen:
            want["options"] = chosen
    elif words and not want.get("query"):
        want["query"] = " ".join(words)
    return want


def _no_food(query: str, result: dict[str, Any]) -> str:
    if result.get("status") == "no_results":
        return _("I found no food matching “%(food)s” in the gym's catalog.") % {
            "food": query
        }
    return _("I cannot reach the food catalog right now.") + " " + read_failed(result)


def logged(result: dict[str, Any]) -> str:
    """An entry logged (or why not), from the tool's result."""

    def done(got: Any) -> str:
        entry = got["entry"]
        return _("Logged: %(grams)s g of %(food)s %(meal)s on %(date)s.") % {
            "grams": figure(entry["grams"]),
            "food": entry["food"],
            "meal": meal_said(entry["meal"]),
            "date": day_written(entry["date"]),
        }

    return outcome(result, done, _("It is waiting for the staff's approval."))


def again(turn: Turn) -> Reply | None:
    """ "Otros 100 g": the food just logged, logged once more (a new entry)."""
    if turn.done:
        return Reply(logged(turn.result("add_food_to_meal") or {}))
    args, result = turn.earlier.get("add_food_to_meal", ({}, {}))
    first = result.get("first") if result.get("status") == "duplicate" else result
    entry = (first or {}).get("entry")
    if not entry:
        return Reply(_("Which food do you want me to log?"))
    grams = GRAMS.search(turn.said)
    arguments = {
        "date": entry["date"],
        "meal": entry["meal"],
        "food_id": entry["food_id"],
        "grams": float(grams[1].replace(",", ".")) if grams else args.get("grams"),
    }
    if turn.takes("add_food_to_meal", "again"):
        arguments["again"] = True  # the same food once more, on purpose (R7)
    return turn.call("again", "add_food_to_meal", arguments)


def diary(turn: Turn) -> Reply | None:
    """A day's diary: its entries by meal and the day's total."""
    result = turn.result("get_meal_diary")
    if result is None:
        day = day_named(turn.said, turn.today) or turn.today
        return turn.call("diary", "get_meal_diary", {"date": day.isoformat()})
    if result.get("status") == "no_results":
        if result.get("date") == turn.today.isoformat():
            return Reply(_("You have nothing logged in your diary today."))
        return Reply(
            _("You have nothing logged in your diary on %(date)s.")
            % {"date": day_written(result.get("date"))}
        )
    if result.get("status") != "ok":
        return Reply(read_failed(result))
    lines = [
        _("- %(meal)s: %(food)s, %(grams)s g (%(kcal)s kcal)")
        % {
            "meal": meal_said(e["meal"], heading=True),
            "food": e["food"],
            "grams": figure(e["grams"]),
            "kcal": figure(e["kcal"]),
        }
        for e in result["entries"]
    ]
    head = _("Your diary of %(date)s:") % {"date": day_written(result["date"])}
    total = _("Total: %(kcal)s kcal.") % {"kcal": figure(result["totals"]["kcal"])}
    return Reply("\n".join([head, *lines, total]))


RULES = (
    Rule(
        "log",
        log_food,
        answers="log",
        applies=lambda s: (
            said_any(s, LOG)
            and bool(GRAMS.search(s) or meal_named(s))
            and not said_any(s, AGAIN)
        ),
    ),
    Rule(
        "again", again, applies=lambda s: said_any(s, AGAIN) and bool(GRAMS.search(s))
    ),
    Rule("diary", diary, applies=lambda s: said_any(s, DIARY)),
    Rule("nutrients", nutrients, applies=lambda s: said_any(s, NUTRIENTS)),
    Rule(
        "another_food",
        another_food,
        applies=lambda s: bool(re.match(r"(?:y|and|what about)\b", s)),
    ),
)
