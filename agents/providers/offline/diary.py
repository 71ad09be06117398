"""The offline demo model's intents about the meal diary: reading a day (or a
meal), taking an entry out, and an entry to change, which is told how."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from agents.providers.offline.base import Intents
from agents.providers.offline.words import (
    ATE,
    EATEN_WORDS,
    EVERY,
    GRAMS,
    MEALS,
    NUTRIENTS,
    TAKE_AWAY,
    asks_for,
    asks_nutrients,
    asks_what,
    day_named,
    food_words,
    grams_of,
    has,
    meal_eaten,
    meal_named,
)
from gymnasia.text import fold
from tools.types import ToolCall

#: Words of a removal that name no food.
REMOVAL_WORDS = (*TAKE_AWAY, "diario", "diary", "from")


#: A food pointed at, to take out ("quítalo", "remove it", "delete that").
IT_TAKEN = re.compile(
    r"\b(?:quita|borra|elimina)(?:lo|la|melo|mela)\b"
    r"|\b(?:remove|delete|take out) (?:it|that)\b"
)


#: The days of a diary asked about by the week: so far this week, or last week.
THIS_WEEK = re.compile(r"\b(?:esta semana|this week|lo que va de semana)\b")
LAST_WEEK = re.compile(r"\b(?:la semana pasada|last week)\b")
#: The meals in the order of a day.
MEAL_ORDER = {"breakfast": 0, "lunch": 1, "snack": 2, "dinner": 3}


def week_asked(
    said: str, today: datetime.date
) -> tuple[list[datetime.date], str, str] | None:
    """The days of the week a (folded) question about the diary names, and how
    to say it (Spanish, English): this week's up to today, or last week's."""
    monday = today - datetime.timedelta(days=today.weekday())
    if THIS_WEEK.search(said):
        days = today.weekday() + 1
        return (
            [monday + datetime.timedelta(days=n) for n in range(days)],
            ("de esta semana"),
            "this week",
        )
    if LAST_WEEK.search(said):
        monday -= datetime.timedelta(days=7)
        return (
            [monday + datetime.timedelta(days=n) for n in range(7)],
            ("de la semana pasada"),
            "last week",
        )
    return None


def just_logged(
    just: Mapping[str, list[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """The diary entries the turn before logged, of its results (``just``)."""
    return [
        got["entry"]
        for got in just.get("add_food_to_meal", [])
        if got.get("status") == "ok"
    ]


class DiaryIntents(Intents):
    def _diary(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        again: bool = False,
        day: datetime.date | None = None,
    ) -> Any:
        """A day's diary; ``again``: asked just before, now for the day named (or
        ``day``, the day asked about before)."""
        week = None if again else week_asked(said, self.today)
        # "¿Qué he cenado?", "¿qué desayuné ayer?", "what's in my breakfast?",
        # "what did I have for breakfast?": that meal's day.
        of_a_meal = asks_what(said) and (
            meal_eaten(said) is not None
            or re.search(rf"\b(mi|my|for) ({'|'.join(MEALS)})\b", said) is not None
        )
        if (
            not again
            and not of_a_meal
            and not has(
                said,
                "diario",
                "he comido",
                "que comi",
                "llevo",
                "total",
                "he tomado",
                "diary",
                "did i eat",
                "have i eaten",
                "have i had",
                "so far",
                "hasta ahora",
                "did i log",
                "have i logged",
                "he anotado",
                "he apuntado",
                "esta anotad",
                "esta apuntad",
            )
            # "How many calories today?": a day's, of no food.
            and not (
                asks_nutrients(said)
                and (day_named(said, self.today) or week)
                and not food_words(said)
            )
        ):
            return None
        if week is not None:
            return self._week(said, results, offered, *week)
        if "get_meal_diary" not in results:
            day = day_named(said, self.today) or day or self.today
            return self._unavailable("get_meal_diary", offered) or self._call(
                "get_meal_diary", {"date": day.isoformat()}
            )
        result = results["get_meal_diary"][-1]
        if result.get("status") == "no_results":
            return self._nothing_logged(result["date"]), []
        if result.get("status") != "ok":
            return self._failure(result), []
        # By meal in the order of a day, each meal's in the order logged.
        entries = sorted(result["entries"], key=lambda e: MEAL_ORDER.get(e["meal"], 4))
        lines = [
            f"- {self._meal(e['meal'])}: {e['food']}, {self._n(e['grams'])} g "
            f"({self._n(e['kcal'])} kcal)"
            for e in entries
        ]
        return (
            self._t(
                f"Tu diario del {result['date']}:", f"Your diary for {result['date']}:"
            )
            + "\n"
            + "\n".join(lines)
            + "\n"
            + f"Total: {self._totals(said, result['totals'])}.",
            [],
        )

    def _totals(self, said: str, totals: Mapping[str, Any]) -> str:
        """A day's calories, with the nutrients she asked about ("¿y de
        proteínas?"), as the diary's totals give them."""
        asked = [
            f"{self._n(totals[key])} g " + self._t(f"de {spanish}", f"of {english}")
            for words, spanish, english, key in NUTRIENTS
            if has(said, *words)
        ]
        return ", ".join([f"{self._n(totals['kcal'])} kcal", *asked])

    def _week(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        days: list[datetime.date],
        spanish: str,
        english: str,
    ) -> Any:
        """The diary of a week's days ("¿cuántas calorías llevo esta semana?"):
        each day read at once (one call each, in one step), then each day's
        totals as the diary gave them; no sum of its own."""
        if "get_meal_diary" not in results:
            return self._unavailable("get_meal_diary", offered) or self._calls(
                [("get_meal_diary", {"date": day.isoformat()}) for day in days]
            )
        read = results["get_meal_diary"]
        failed = [got for got in read if got.get("status") not in ("ok", "no_results")]
        if failed:
            return self._failure(failed[0]), []
        lines = [
            f"- {got['date']}: "
            + (
                self._totals(said, got["totals"])
                if got["status"] == "ok"
                else self._t("nada anotado", "nothing logged")
            )
            for got in sorted(read, key=lambda got: str(got["date"]))
        ]
        head = self._t(f"Tu diario {spanish}:", f"Your diary {english}:")
        return head + "\n" + "\n".join(lines), []

    def _logged_nutrients(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        logged: list[dict[str, Any]],
    ) -> Any:
        """ "¿Cuántas proteínas son?" right after foods were logged: each entry's
        calories, and the nutrients asked, as her diary of its day gives them
        (what the write returns has none)."""
        days = sorted({entry["date"] for entry in logged})
        if "get_meal_diary" not in results:
            return self._unavailable("get_meal_diary", offered) or self._calls(
                [("get_meal_diary", {"date": day}) for day in days]
            )
        read = dict(zip(days, results["get_meal_diary"], strict=False))
        lines = []
        for entry in logged:
            result = read.get(entry["date"], {})
            if result.get("status") not in ("ok", "no_results"):
                return self._failure(result), []
            found = next(
                (
                    line
                    for line in result.get("entries", [])
                    if line["entry_id"] == entry["entry_id"]
                ),
                None,
            )
            food = f"{self._n(entry['grams'])} g {self._t('de', 'of')} {entry['food']}"
            lines.append(
                f"{food}: {self._totals(said, found)}."
                if found
                else f"{food}: "
                + self._t(
                    f"ya no está en tu diario del {entry['date']}.",
                    f"it is no longer in your diary for {entry['date']}.",
                )
            )
        return "\n".join(lines), []

    def _nothing_logged(self, day: str) -> str:
        """An empty diary, naming the day looked at ("today" when it is)."""
        if day == self.today.isoformat():
            return self._t(
                "Hoy no tienes nada anotado en el diario.",
                "Nothing is logged in your diary today.",
            )
        return self._t(
            f"No tienes nada anotado el {day}.", f"Nothing is logged on {day}."
        )

    def _remove_food(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        just: Mapping[str, list[dict[str, Any]]],
    ) -> Any:
        """A food taken out of the diary ("quita el arroz de mi diario"): the day's
        entry of that food, of the meal named, of the grams said, looked up first;
        a food named otherwise than in the diary ("chicken") is looked up in the
        catalog. When several entries could be meant, it asks which."""
        if not asks_for(said, *TAKE_AWAY):
            return None
        if has(said, "reserva", "clase", "booking", "class"):
            return None
        logged = just_logged(just)
        if len(logged) == 1 and IT_TAKEN.search(said):
            # "Quítalo", "remove it" right after a food was logged: that entry.
            return self._entries_taken_back(logged, results, offered)
        day = day_named(said, self.today) or self.today
        if "get_meal_diary" not in results:
            return self._diary_read_first(day, offered)
        entries = results["get_meal_diary"][-1].get("entries", [])
        # Not the words that say it was eaten ("todo lo que he comido").
        words = [
            w
            for w in food_words(said)
            if len(w) > 2
            and not has(w, *REMOVAL_WORDS)
            and not (ATE.fullmatch(w) or w in EATEN_WORDS)
        ]
        if has(said, *EVERY) and all(has(w, *EVERY) for w in words):
            # "Borra todo" (not "todo el arroz"): one call takes out one entry,
            # never a partial "done" for "all".
            if not entries:
                return self._nothing_logged(day.isoformat()), []
            return self._t(
                "Las anotaciones se quitan de una en una. ",
                "Entries are removed one at a time. ",
            ) + self._which_entry(entries), []
        if "remove_meal_entry" not in results:
            amount = GRAMS.search(said)
            entry = self._entry_meant(
                said, entries, words, results, grams_of(amount) if amount else None
            )
            if not isinstance(entry, dict):
                return entry  # a search first, or what to tell her
            return self._call("remove_meal_entry", {"entry_id": entry["entry_id"]})
        return self._removed_told(results["remove_meal_entry"][-1:]), []

    def _entries_taken_back(
        self,
        entries: list[dict[str, Any]],
        results: dict[str, Any],
        offered: set[str],
    ) -> Any:
        """The entries just logged, taken out ("deshaz eso", "quítalo"): one
        call each, in one step."""
        if "remove_meal_entry" not in results:
            return self._unavailable("remove_meal_entry", offered) or self._calls(
                [("remove_meal_entry", {"entry_id": e["entry_id"]}) for e in entries]
            )
        return self._removed_told(results["remove_meal_entry"]), []

    def _removed_told(self, removals: list[dict[str, Any]]) -> str:
        """What the removals did: the entries taken out, then each refusal."""
        removed = [
            self._t(
                f"{self._n(r['grams'])} g de {r['food']} {self._of_meal(r['meal'])} "
                f"del {r['date']}",
                f"{self._n(r['grams'])} g of {r['food']} from "
                f"{self._of_meal(r['meal'])} on {r['date']}",
            )
            for r in (got["removed"] for got in removals if got.get("status") == "ok")
        ]
        told = (
            [self._t("Quitado: ", "Removed: ") + self._listed(removed) + "."]
            if removed
            else []
        )
        told += [self._failure(got) for got in removals if got.get("status") != "ok"]
        return " ".join(told)

    def _change_entry(
        self, said: str, results: dict[str, Any], offered: set[str]
    ) -> Any:
        """An entry of the diary to change ("cambia el arroz a 120 g"): no tool
        changes one; it is taken out and logged again, which it says how to ask
        for with the entry's own words, found in that day's diary (never half of
        it made on a guess)."""
        changes = ("cambia", "modifica", "corrige", "change", "update", "edit")
        amount = GRAMS.search(said)
        if not (asks_for(said, *changes) and amount):
            return None
        words = [w for w in food_words(said[: amount.start()]) if not has(w, *changes)]
        if not words:
            return None
        day = day_named(said, self.today) or self.today
        if "get_meal_diary" not in results:
            return self._diary_read_first(day, offered)
        entries = results["get_meal_diary"][-1].get("entries", [])
        entry = self._entry_meant(said, entries, words, results)
        if not isinstance(entry, dict):
            return entry  # a search first, or what to tell her
        food, of_meal = entry["food"], self._of_meal(entry["meal"])
        grams, to_meal = self._n(entry["grams"]), self._to_meal(entry["meal"])
        return self._t(
            "No puedo cambiar una anotación: quítala y añádela de nuevo, con "
            f"«quita {grams} g de {food} {of_meal}» y luego «añade "
            f"{amount.group(0)} de {food} {to_meal}».",
            "I cannot change an entry: remove it and log it again, with "
            f'"remove {grams} g of {food} from {of_meal}", then "add '
            f'{amount.group(0)} of {food} {to_meal}".',
        ), []

    def _diary_read_first(self, day: datetime.date, offered: set[str]) -> Any:
        """An entry to take out is found in that day's diary, read first (unless
        entries cannot be taken out here)."""
        return self._unavailable("remove_meal_entry", offered) or self._call(
            "get_meal_diary", {"date": day.isoformat()}
        )

    def _entry_meant(
        self,
        said: str,
        entries: list[dict[str, Any]],
        words: list[str],
        results: dict[str, Any],
        grams: float | None = None,
    ) -> dict[str, Any] | tuple[str, list[ToolCall]]:
        """The one entry of a day's diary that a message names: of the meal said,
        of the food ``words`` name (any, without words; looked up in the catalog
        first when no entry's name has them), of the ``grams`` said. Otherwise
        what to do: that search, or tell her that none is, or ask which of
        several (never a guess)."""
        meal = meal_named(said)
        # A food named otherwise than in the diary ("rice" for «Arroz blanco
        # (cocido)») is one the catalog found for those words.
        found = {
            food["food_id"]
            for got in results.get("search_foods", [])
            for food in got.get("foods", [])
        }

        def named(grams: float | None) -> list[dict[str, Any]]:
            return [
                e
                for e in entries
                if (not meal or e["meal"] == meal)
                and (
                    not words
                    or any(w in fold(e["food"]).split() for w in words)
                    or e["food_id"] in found
                )
                and (grams is None or float(e["grams"]) == grams)
            ]

        chosen = named(grams)
        if not chosen and words and "search_foods" not in results:
            return self._call("search_foods", {"query": words[0]})
        if not chosen and grams is not None:
            # "Quita 50 g del arroz" of 150 g: no tool takes out part of one.
            chosen = named(None)
            if len(chosen) == 1:
                return self._part_of_an_entry(chosen[0], grams), []
        if not chosen:
            return self._t(
                "No encuentro eso en tu diario de ese día.",
                "I cannot find that in your diary for that day.",
            ), []
        if len(chosen) > 1:
            return self._which_entry(chosen), []
        return chosen[0]

    def _part_of_an_entry(self, entry: Mapping[str, Any], grams: float) -> str:
        """Grams to take out of an entry that has other grams: what it has, and
        how to ask for what she means."""
        food, meal, logged = entry["food"], entry["meal"], self._n(entry["grams"])
        asked = self._n(int(grams) if grams.is_integer() else grams)  # as she said
        in_meal = self._meal(meal, in_a_sentence=True)
        return self._t(
            f"En tu diario hay {logged} g de {food} en {in_meal}, no {asked} g. Una "
            f"anotación se quita entera: «quita {logged} g de {food} "
            f"{self._of_meal(meal)}», y luego añade los gramos que quieras dejar.",
            f"Your diary has {logged} g of {food} for {in_meal}, not {asked} g. An "
            f'entry is removed whole: "remove {logged} g '
            f'of {food} from {self._of_meal(meal)}", then log the grams you want to '
            "keep.",
        )

    def _which_entry(self, entries: list[dict[str, Any]]) -> str:
        """Several entries of the diary could be meant: which one, and how to say
        it."""
        listed = ", ".join(
            f"{e['food']} {self._n(e['grams'])} g ({self._meal(e['meal'])})"
            for e in entries[:5]
        )
        last = entries[-1]
        of_meal = self._of_meal(last["meal"])
        grams = self._n(last["grams"])
        return self._t(
            f"Hay varias en tu diario: {listed}. ¿Cuál quito? Dímelo con sus gramos, "
            f"por ejemplo: «quita {grams} g de {last['food']} {of_meal}».",
            f"Your diary has several: {listed}. Which one shall I remove? Tell me "
            f'its grams, for example: "remove {grams} g of {last["food"]} '
            f'from {of_meal}".',
        )
