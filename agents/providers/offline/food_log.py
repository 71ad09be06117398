"""The offline demo model's intents about logging food: adding a food (or
several) to a meal, with the follow-ups of its questions: which food, how many
grams. A food's nutrients are in ``nutrients``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from agents.providers.offline.base import Intents, undone_since
from agents.providers.offline.words import (
    ATE,
    EATEN_WORDS,
    GRAMS,
    MEAL_VERBS,
    asks_how_much,
    asks_nutrients,
    asks_what,
    asks_whether,
    day_named,
    day_of,
    food_words,
    grams_of,
    has,
    meal_eaten,
    meal_named,
)
from gymnasia.text import fold

#: Words that ask to log a food: these start one ("añádeme", "quiero añadir"),
#: and these are one ("pon", never "¿qué pone?"; "apúntalo", "¿puedes anotar…?",
#: never "apuntarse al gimnasio"; "log", never "log in"; "add", never "address").
LOG_STARTS = ("anade", "anadir")
LOG_WORDS = re.compile(
    r"\b(pon|ponme|ponlo|mete|meteme|metelo|put|record|add|log(?!\s+(?:in|out)\b)"
    r"|(?:apunta|anota|registra)(?:me|lo|la|melo|mela)?"
    r"|(?:anotar|registrar)(?:me|lo|la|melo|mela)?|apuntar(?:lo|la))\b"
)


#: Words that ask to log the same once more ("apúntame otros 100 g", "otra vez",
#: "repítelo", "100 g más", "another 100 g", "the same again", "100 g more",
#: "repeat it"): the call then
#: carries ``again`` (R7). No part of a food's name.
AGAIN = re.compile(
    r"\b(?:otra vez|de nuevo|(?:(?:lo|the) )?(?:mismo|same)|otr[oa]s?|mas"
    r"|repitelo|repite|another|again|(?:once )?more|repeat(?: it| that)?)\b"
)


def asks_to_log(said: str) -> bool:
    """Whether a (folded) message asks to log a food ("apúntame", "pon", "add")."""
    return has(said, *LOG_STARTS) or LOG_WORDS.search(said) is not None


def food_named(said: str) -> list[str]:
    """The words of a (folded) request to log a food that may name it, without
    the request's own verbs ("añade una manzana": "manzana")."""
    return [
        w
        for w in food_words(said)
        if not (
            asks_to_log(w) or ATE.fullmatch(w) or w in MEAL_VERBS or w in EATEN_WORDS
        )
    ]


#: What joins the foods of one request ("avena y un plátano", "oats, eggs and
#: toast").
AND = re.compile(r",|\b(?:y|and)\b")


class FoodAsked(NamedTuple):
    """One food of a request to log several: where its part of the (folded)
    request starts, its amount (None when not said) and its words."""

    start: int
    amount: re.Match[str] | None
    words: list[str]


def foods_asked(said: str) -> list[FoodAsked]:
    """The foods a (folded) request to log names: its parts between "y", "and"
    and commas, and within a part each amount with the words after it."""
    joints = list(AND.finditer(said))
    starts = [0] + [joint.end() for joint in joints]
    ends = [joint.start() for joint in joints] + [len(said)]
    asked: list[FoodAsked] = []
    for start, end in zip(starts, ends, strict=True):
        amounts = list(GRAMS.finditer(said, start, end))
        if len(amounts) <= 1:
            amount = amounts[0] if amounts else None
            cut = (amount.start(), amount.end()) if amount else (end, end)
            words = food_named(said[start : cut[0]] + " " + said[cut[1] : end])
            if amount and not words and asked and asked[-1].amount is None:
                # "He cenado pollo, unos 200 g": the grams of the food before.
                asked[-1] = asked[-1]._replace(amount=amount)
            elif words or amount:
                # A part with grams and no food stays: grams of what?
                asked.append(FoodAsked(start, amount, words))
            continue
        # "100 g de arroz 150 g de pollo": each amount and what follows it.
        after = [a.start() for a in amounts[1:]] + [end]
        asked += [
            FoodAsked(a.start(), a, food_named(said[a.end() : e]))
            for a, e in zip(amounts, after, strict=True)
        ]
    return asked


def logged_once(just: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The entry of the one food the turn before logged, or found logged already
    (a duplicate), of its results (``just``): what "otra vez" asks for again."""
    added = just.get("add_food_to_meal", [])
    got = added[0] if len(added) == 1 else {}
    if got.get("status") == "duplicate":
        got = got.get("first") or {}
    return got.get("entry") if got.get("status") == "ok" else None


def request_of(previous: str, before_previous: str) -> str:
    """The request a member's answer goes on from: her message before
    (``previous``), with the one before that when ``previous`` only gave the grams
    she was asked for ("añade arroz a la cena", then "200 g": the food, meal and
    day are in the earlier one)."""
    folded = fold(previous)
    grams = GRAMS.search(folded)
    if grams is None or food_words(folded[: grams.start()] + folded[grams.end() :]):
        return previous
    return f"{before_previous} {previous}"


#: Words that point at the food just talked about ("add that", "añádelo").
POINTS_BACK = re.compile(
    r"\b(that|it|eso|esto|anadelo|anademelo|apuntalo|apuntamelo|anotalo|ponlo|"
    r"metelo)\b"
)


class FoodLogIntents(Intents):
    def _add_food(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
        like: Mapping[str, Any] | None = None,
        previous: str = "",
        logged: Mapping[str, Any] | None = None,
        again: bool = False,
    ) -> Any:
        """A food logged; ``like``: the arguments of the food logged just before,
        of which this goes on ("y 200 g de arroz": the same meal and day);
        ``previous``: the member's message before, which "add that" points at;
        ``logged``: the entry the turn before logged, which "otra vez" asks for
        again; ``again``: the request asked for the same once more."""
        if asks_whether(said):
            return None  # "Did I log 100 g of chicken?" asks of her diary
        again = again or AGAIN.search(said) is not None
        said = AGAIN.sub(" ", said)
        grams = GRAMS.search(said)
        food_said = said[grams.end() :] if grams else ""
        logs = asks_to_log(said) or ATE.search(said) or meal_eaten(said)
        several = foods_asked(said) if logs and grams and not asks_what(said) else []
        if len(several) > 1:
            return self._add_foods(said, several, results, offered, earlier)
        # "He comido 200 g de arroz", "I ate 200 g of rice", "he cenado 2
        # huevos": eaten, so logged; "¿qué he cenado?" asks of her diary.
        by_verb = None if asks_what(said) else meal_eaten(said)
        asks = asks_what(said) or asks_how_much(said)
        eaten = by_verb or (ATE.search(said) and (grams or not asks))
        # "100 g de avena en la cena": grams of a food for a meal, said without a
        # verb and not asked about ("¿es bueno tomar 100 g de avena…?").
        stated = "?" not in said and not (asks or asks_nutrients(said))
        put = grams and meal_named(said) and stated
        # "Otra vez", "100 g más", "otros 100 g de pollo" right after a food
        # logged: for its meal and day; that food, with its grams, unless
        # others are said (never its grams for "otros 150").
        same = logged if again and (stated or asks_to_log(said)) else None
        if same and not food_named(said) and (grams or not re.search(r"\d", said)):
            amount = grams.group(0) if grams else f"{same['grams']} g"
            said_again = f"{GRAMS.sub(' ', said)} {amount} {fold(same['food'])}"
            return self._add_food(
                said_again, results, offered, earlier, like=same, again=True
            )
        if not (asks_to_log(said) or eaten or like or put or (same and grams)):
            return None
        like = like or same
        if not grams and POINTS_BACK.search(said):
            # "Add that to my snack" after "how many calories in 100 g of oats?":
            # those grams of the food asked about.
            grams = GRAMS.search(fold(previous))
        if not grams:
            # "Añade una manzana", "I ate an apple": a food, but how much?
            a_food = food_named(said) and not has(
                said, "clase", "class", "reserva", "booking"
            )
            if not (by_verb or meal_named(said) or a_food):
                return None
            return self._t(
                "¿Cuántos gramos? Por ejemplo: «añade 150 g de manzana a mi merienda».",
                'How many grams? For example: "add 150 g of apple to my snack".',
            ), []
        words = food_words(food_said)
        if not words and grams:
            # "I had oatmeal for breakfast, about 80 g": named before its grams.
            words = food_named(said[: grams.start()])
        if not words:
            # "Añade 120 g a la merienda" right after asking about a food: the
            # words of that food's name (of every food found: she is then asked
            # which).
            asked = earlier.get("search_foods", {})
            foods = asked.get("foods", []) if asked.get("status") == "ok" else []
            names = [food_words(fold(food["name"])) for food in foods]
            words = [w for w in names[0] if all(w in n for n in names)] if names else []
            if not words:
                return None
        meal = meal_named(said)
        meal = meal or by_verb or (like or {}).get("meal")
        if meal is None:  # never a guess: the member says which meal
            amount, named = grams.group(0), " ".join(words)
            return self._unavailable("add_food_to_meal", offered) or (
                self._t(
                    "¿En qué comida lo anoto: desayuno, comida, cena o merienda? Por "
                    f"ejemplo: «añade {amount} de {named} a la comida».",
                    "Which meal shall I log it for: breakfast, lunch, dinner or "
                    f'snack? For example: "add {amount} of {named} to my lunch".',
                ),
                [],
            )
        if "search_foods" not in results:
            return self._unavailable("add_food_to_meal", offered) or self._call(
                "search_foods", {"query": words[0]}
            )
        searches = results["search_foods"]
        found = searches[0]
        if found.get("status") != "ok":
            return self._t(
                "No he encontrado ese alimento en el catálogo.",
                "I could not find that food in the catalog.",
            ), []
        if "add_food_to_meal" not in results:
            foods = _named(found["foods"], words)
            if len(foods) > 1 and len(words) > 1:
                # "white rice": the catalog, with every word, may know which.
                if len(searches) == 1:
                    return self._call("search_foods", {"query": " ".join(words)})
                narrowed = searches[-1]
                if narrowed.get("status") == "ok" and len(narrowed["foods"]) == 1:
                    foods = narrowed["foods"]
            if len(foods) > 1:  # never a guess: the member says which
                return self._which_food(foods, grams.group(0), meal), []
            food = foods[0]
            return self._call(
                "add_food_to_meal",
                {
                    "date": (
                        day_named(said, self.today) or day_of(like) or self.today
                    ).isoformat(),
                    "meal": meal,
                    "food_id": food["food_id"],
                    "grams": grams_of(grams),
                    **({"again": True} if again else {}),
                },
            )
        result = results["add_food_to_meal"][-1]
        if result.get("status") == "ok":
            entry = result["entry"]
            meal = self._meal(entry["meal"], in_a_sentence=True)
            return self._t(
                f"Anotado: {self._n(entry['grams'])} g de {entry['food']} en {meal} "
                f"del {entry['date']}.",
                f"Logged: {self._n(entry['grams'])} g of {entry['food']} for {meal} "
                f"on {entry['date']}.",
            ), []
        undone = undone_since("add_food_to_meal", result, earlier)
        return self._failure(result, undone=undone), []

    def _add_foods(
        self,
        said: str,
        asked: list[FoodAsked],
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
    ) -> Any:
        """Several foods logged in one request ("añade 100 g de arroz blanco y
        150 g de pollo a la cena"): all looked for in one step, then all logged
        in the next, one call each. Nothing is logged while one of them is not
        found or not singled out, has no grams said, or no meal is said."""
        if not all(food.words for food in asked):
            # "Añade 100 g y 150 g de pollo": 100 g of what?
            return self._t(
                "Dime cada alimento con sus gramos, por ejemplo: «añade 100 g de "
                "arroz y 150 g de pollo a la cena».",
                'Tell me each food with its grams, for example: "add 100 g of rice '
                'and 150 g of chicken to my dinner".',
            ), []
        meal = _meal_asked(said)
        if meal is None:  # never a guess: the member says which meal
            return self._unavailable("add_food_to_meal", offered) or (
                self._t(
                    "¿En qué comida los anoto: desayuno, comida, cena o merienda?",
                    "Which meal shall I log them for: breakfast, lunch, dinner or "
                    "snack?",
                ),
                [],
            )
        if "search_foods" not in results:
            return self._unavailable("add_food_to_meal", offered) or self._calls(
                [("search_foods", {"query": " ".join(food.words)}) for food in asked]
            )
        chosen = []
        for (_, amount, words), found in zip(
            asked, results["search_foods"], strict=False
        ):
            name = " ".join(words)
            if found.get("status") != "ok":
                return self._t(
                    f"No he encontrado «{name}» en el catálogo; no he anotado nada.",
                    f'I could not find "{name}" in the catalog; I have logged nothing.',
                ), []
            foods = _named(found["foods"], words)
            if len(foods) > 1:
                return self._which_of_several(asked, name, foods, meal), []
            chosen.append((amount, foods[0]))
        without = [food["name"] for amount, food in chosen if amount is None]
        if without:
            # "60 g de avena y un plátano": how much banana?
            names = self._listed(without)
            return self._t(
                f"¿Cuántos gramos de {names}? No he anotado nada todavía.",
                f"How many grams of {names}? I have logged nothing yet.",
            ), []
        if "add_food_to_meal" not in results:
            day = (day_named(said, self.today) or self.today).isoformat()
            return self._calls(
                [
                    (
                        "add_food_to_meal",
                        {
                            "date": day,
                            "meal": meal,
                            "food_id": food["food_id"],
                            "grams": grams_of(amount),
                        },
                    )
                    for amount, food in chosen
                    if amount is not None
                ]
            )
        added = results["add_food_to_meal"]
        logged = [r["entry"] for r in added if r.get("status") == "ok"]
        told = []
        if logged:
            of = self._t("de", "of")
            listed = self._listed(
                [f"{self._n(e['grams'])} g {of} {e['food']}" for e in logged]
            )
            in_meal = self._meal(logged[0]["meal"], in_a_sentence=True)
            day = logged[0]["date"]
            told.append(
                self._t(
                    f"Anotado en {in_meal} del {day}: {listed}.",
                    f"Logged for {in_meal} on {day}: {listed}.",
                )
            )
        for (_, food), result in zip(chosen, added, strict=False):
            if result.get("status") != "ok":
                undone = undone_since("add_food_to_meal", result, earlier)
                told.append(f"{food['name']}: {self._failure(result, undone=undone)}")
        return " ".join(told), []

    def _which_of_several(
        self,
        asked: list[FoodAsked],
        name: str,
        foods: list[dict[str, Any]],
        meal: str,
    ) -> str:
        """One food of a request for several is several in the catalog: which,
        and the request to say again with its name."""
        names = ", ".join(food["name"] for food in foods[:5])
        of = self._t("de", "of")
        again = self._listed(
            [
                (f"{amount.group(0)} {of} " if amount else "")
                + (foods[0]["name"] if " ".join(words) == name else " ".join(words))
                for _, amount, words in asked
            ]
        )
        to_meal = self._to_meal(meal)
        return self._t(
            f"Hay varios «{name}» en el catálogo: {names}. No he anotado nada: "
            f"dímelo otra vez con su nombre, por ejemplo: «añade {again} {to_meal}».",
            f'The catalog has several "{name}": {names}. I have logged nothing: tell '
            f'me again with its name, for example: "add {again} {to_meal}".',
        )

    def _food_chosen(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        before: Mapping[str, dict[str, Any]],
        earlier: Mapping[str, dict[str, Any]],
        previous: str,
    ) -> Any:
        """Her answer ("white rice") to "which one shall I log?": the turn before
        found several foods for grams she gave, and logged none."""
        asked = fold(previous)
        grams = GRAMS.search(asked)
        found = earlier.get("search_foods", {}).get("foods", [])
        if (
            grams is None
            or GRAMS.search(said)
            or has(said, "gracias", "thank")
            or "search_foods" not in before
            or "add_food_to_meal" in before
            or len(found) < 2
            or _meal_asked(asked) is None
        ):
            return None
        # One of the foods she was asked to choose from ("el integral" of the
        # rices, never also "Pan integral"): that food, by its whole name.
        chosen = _named(found, food_words(said))
        food = fold(chosen[0]["name"]) if len(chosen) == 1 else said
        return self._logged_as_asked(
            f"{grams.group(0)} {food}", asked, results, offered, earlier
        )

    def _grams_given(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
        previous: str,
    ) -> Any:
        """Her answer ("150 g") to "how many grams?": the food, meal and day of
        the request before, logged with those grams."""
        asked = fold(previous)
        grams = GRAMS.search(said)
        if grams is None or food_words(said[: grams.start()] + said[grams.end() :]):
            return None
        if GRAMS.search(asked):
            # "120 g" for the banana of "60 g de avena y un plátano": the request
            # again, with those grams.
            several = foods_asked(asked)
            without = [food for food in several if food.amount is None]
            if len(several) < 2 or len(without) != 1:
                return None
            at = without[0].start
            again = f"{asked[:at]} {grams.group(0)} {self._t('de', 'of')} {asked[at:]}"
            return self._add_food(again, results, offered, earlier)
        if not (asks_to_log(asked) or ATE.search(asked) or meal_eaten(asked)):
            return None
        food = food_named(asked)
        if not food:
            return None
        return self._logged_as_asked(
            f"{grams.group(0)} {' '.join(food)}", asked, results, offered, earlier
        )

    def _logged_as_asked(
        self,
        said: str,
        asked: str,
        results: dict[str, Any],
        offered: set[str],
        earlier: Mapping[str, dict[str, Any]],
    ) -> Any:
        """``said`` (grams and a food) logged for the meal and day of her request
        before, ``asked`` (folded)."""
        day = day_named(asked, self.today) or self.today
        return self._add_food(
            said,
            results,
            offered,
            earlier,
            like={"meal": _meal_asked(asked), "date": day.isoformat()},
            again=AGAIN.search(asked) is not None,
        )

    def _which_food(self, foods: list[dict[str, Any]], grams: str, meal: str) -> str:
        """Several foods match: which one, and how to say it."""
        names = ", ".join(food["name"] for food in foods[:5])
        first = foods[0]["name"]
        to_meal = self._to_meal(meal)
        return self._t(
            f"Hay varios en el catálogo: {names}. ¿Cuál anoto? Dímelo con su "
            f"nombre, por ejemplo: «añade {grams} de {first} {to_meal}».",
            f"The catalog has several: {names}. Which one shall I log? Tell me "
            f'its name, for example: "add {grams} of {first} {to_meal}".',
        )


def _named(foods: list[dict[str, Any]], words: list[str]) -> list[dict[str, Any]]:
    """The foods whose names have every word the member said ("arroz integral"),
    or all of those the catalog found when no name has them (an English alias)."""
    named = [f for f in foods if all(has(fold(f["name"]), word) for word in words)]
    return named or foods


def _meal_asked(said: str) -> str | None:
    """The meal of a (folded) request to log a food: named, or said by its verb."""
    return meal_named(said) or meal_eaten(said)
