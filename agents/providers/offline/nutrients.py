"""The offline demo model's intent about a food's nutrients, from the gym's
catalog."""

from __future__ import annotations

import re
from typing import Any

from agents.providers.offline.base import Intents
from agents.providers.offline.words import (
    as_written,
    asks_nutrients,
    food_words,
    has,
    kind_named,
)

#: Words that compare foods ("compara", "¿qué tiene más…?", "what's healthier?").
COMPARES = ("compar", "mas", "menos", "mejor", "more", "less", "better", "health")
#: What separates the foods of one question ("el salmón y el pollo", "rice or
#: pasta"); "con" and "with" only in a comparison ("arroz con leche" is one).
BETWEEN_FOODS = re.compile(r",|\b(?:y|and|o|or|vs|versus)\b")
WITH = re.compile(r"\b(?:con|with)\b")


def foods_compared(said: str) -> list[str]:
    """The foods a (folded) question about nutrients names, each as the words
    to look it up by."""
    if has(said, *COMPARES):
        said = WITH.sub(",", said)
    parts = (" ".join(food_words(part)) for part in BETWEEN_FOODS.split(said))
    return [part for part in parts if part]


class NutrientIntents(Intents):
    def _nutrients(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        again: bool = False,
        message: str = "",
    ) -> Any:
        """A food's nutrients from the catalog; ``again``: the question of the turn
        before, asked of another food ("and in 150 g of rice?"). A food not found
        is named as her ``message`` wrote it ("té", not "te")."""
        foods = [] if again else foods_compared(said)
        several = (
            len(foods) > 1
            and not (kind_named(said) or has(said, "clase", "class"))
            and (asks_nutrients(said) or has(said, *COMPARES))
        )
        if several:
            # "¿Cuántas calorías tienen el salmón y el pollo?", "rice or pasta?".
            return self._several_nutrients(foods, results, offered, message)
        if not (again or asks_nutrients(said)):
            return None
        words = food_words(said)
        if not words:
            return None
        # Every word said first ("arroz integral"); when no food has them all
        # ("pollo asado"), each word in turn, and the answer says so.
        queries = [" ".join(words), *(words if len(words) > 1 else [])]
        searches = results.get("search_foods", [])
        if not searches:
            return self._unavailable("search_foods", offered) or self._call(
                "search_foods", {"query": queries[0]}
            )
        result = searches[-1]
        if result.get("status") == "no_results" and len(searches) < len(queries):
            return self._call("search_foods", {"query": queries[len(searches)]})
        asked = as_written(queries[0], message)
        if result.get("status") == "no_results":
            return self._t(
                f"No he encontrado ningún alimento que coincida con «{asked}» "
                "en el catálogo del gimnasio.",
                f"I found no food matching “{asked}” in the gym's catalog.",
            ), []
        if result.get("status") != "ok":
            return self._t(
                "No puedo consultar el catálogo de alimentos ahora mismo. ",
                "I cannot reach the food catalog right now. ",
            ) + self._failure(result), []
        lines = [self._food_line(food) for food in result["foods"]]
        head = self._t(
            "Según el catálogo del gimnasio:", "According to the gym's catalog:"
        )
        if len(searches) > 1:
            query = as_written(queries[len(searches) - 1], message)
            head = self._t(
                f"El catálogo del gimnasio no tiene «{asked}»; con «{query}» tiene:",
                f"The gym's catalog has no “{asked}”; with “{query}” it has:",
            )
        return head + "\n" + "\n".join(lines), []

    def _food_line(self, food: dict[str, Any]) -> str:
        """A food's nutrients per 100 g, as the catalog gave them."""
        per = food["per_100g"]
        carbs, protein, fat, kcal = (
            self._n(per[key])
            for key in ("carbohydrates_g", "protein_g", "fat_g", "kcal")
        )
        return self._t(
            f"- {food['name']}: {carbs} g de hidratos de carbono, {protein} g de "
            f"proteínas, {fat} g de grasas y {kcal} kcal por 100 g.",
            f"- {food['name']}: {carbs} g of carbohydrates, {protein} g of protein, "
            f"{fat} g of fat and {kcal} kcal per 100 g.",
        )

    def _several_nutrients(
        self,
        foods: list[str],
        results: dict[str, Any],
        offered: set[str],
        message: str = "",
    ) -> Any:
        """The nutrients of several foods: each looked for at once (one call
        each, in one step), then each answered from its own result; never a
        judgement of which is better, only the catalog's figures."""
        searches = results.get("search_foods", [])
        if not searches:
            return self._unavailable("search_foods", offered) or self._calls(
                [("search_foods", {"query": food}) for food in foods]
            )
        failed = next(
            (r for r in searches if r.get("status") not in ("ok", "no_results")), None
        )
        if failed is not None:
            return self._t(
                "No puedo consultar el catálogo de alimentos ahora mismo. ",
                "I cannot reach the food catalog right now. ",
            ) + self._failure(failed), []
        lines = []
        for food, result in zip(foods, searches, strict=False):
            if result.get("status") == "no_results":
                named = as_written(food, message)
                lines.append(
                    self._t(
                        f"- «{named}»: no está en el catálogo del gimnasio.",
                        f"- “{named}”: not in the gym's catalog.",
                    )
                )
            else:
                lines += [self._food_line(found) for found in result["foods"]]
        head = self._t(
            "Según el catálogo del gimnasio:", "According to the gym's catalog:"
        )
        return head + "\n" + "\n".join(lines), []
