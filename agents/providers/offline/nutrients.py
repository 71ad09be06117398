"""The offline demo model's intent about a food's nutrients, from the gym's
catalog."""

from __future__ import annotations

from typing import Any

from agents.providers.offline.base import Intents
from agents.providers.offline.words import asks_nutrients, food_words


class NutrientIntents(Intents):
    def _nutrients(
        self,
        said: str,
        results: dict[str, Any],
        offered: set[str],
        again: bool = False,
    ) -> Any:
        """A food's nutrients from the catalog; ``again``: the question of the turn
        before, asked of another food ("and in 150 g of rice?")."""
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
        if result.get("status") == "no_results":
            return self._t(
                f"No he encontrado ningún alimento que coincida con «{queries[0]}» "
                "en el catálogo del gimnasio.",
                f"I found no food matching “{queries[0]}” in the gym's catalog.",
            ), []
        if result.get("status") != "ok":
            return self._t(
                "No puedo consultar el catálogo de alimentos ahora mismo. ",
                "I cannot reach the food catalog right now. ",
            ) + self._failure(result), []
        lines = []
        for food in result["foods"]:
            per = food["per_100g"]
            carbs, protein, fat, kcal = (
                self._n(per[key])
                for key in ("carbohydrates_g", "protein_g", "fat_g", "kcal")
            )
            lines.append(
                self._t(
                    f"- {food['name']}: {carbs} g de hidratos de carbono, {protein} g "
                    f"de proteínas, {fat} g de grasas y {kcal} kcal por 100 g.",
                    f"- {food['name']}: {carbs} g of carbohydrates, {protein} g of "
                    f"protein, {fat} g of fat and {kcal} kcal per 100 g.",
                )
            )
        head = self._t(
            "Según el catálogo del gimnasio:", "According to the gym's catalog:"
        )
        if len(searches) > 1:
            query = queries[len(searches) - 1]
            head = self._t(
                f"El catálogo del gimnasio no tiene «{queries[0]}»; con «{query}» "
                "tiene:",
                f"The gym's catalog has no “{queries[0]}”; with “{query}” it has:",
            )
        return head + "\n" + "\n".join(lines), []
