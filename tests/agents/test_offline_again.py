"""The demo model and a food asked for once more ("apúntame otros 100 g", "otra
vez", "100 g más", "another 100 g", "the same again", "100 g more"): it proposes
``add_food_to_meal`` with ``"again": true`` (R7), and only then; a first request,
or a question with "más", carries none. A duplicate that comes back anyway is
told as such, never as a new entry."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from typing import Any

import pytest

from agents.providers.base import AssistantStep, ModelRequest, ToolResults, UserText
from agents.providers.offline.model import OfflineProvider
from gymnasia.nutrition.models import Food, MealEntry
from tests.agents.api_client import send
from tests.agents.offline_kit import member_conversation, reply_to
from tools.canonical import canonical_arguments
from tools.integrations.builtin import number
from tools.integrations.nutrition import NutritionClient
from tools.models import ToolCallLog
from tools.registry import published_registry
from tools.types import ToolResult

pytestmark = pytest.mark.django_db

TODAY = datetime.date(2026, 12, 3)
TOMORROW = "2026-12-04"
WHITE_RICE = "Arroz blanco (cocido)"


class Turn:
    """What the demo model did with one message: the calls it proposed, each as
    (tool, arguments), and its reply."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.reply = ""

    @property
    def logged(self) -> list[dict[str, Any]]:
        """The arguments of each ``add_food_to_meal`` it proposed."""
        return [args for name, args in self.calls if name == "add_food_to_meal"]


def talk(agent, *messages: str, language: str = "es", honoured: bool = True):
    """The demo model's turns for ``messages``, its tools answered as the app
    answers them: foods from the demo gym's catalog, each food logged as asked,
    and a write the same as an earlier one answered as its duplicate (R7),
    unless it carries ``again`` and ``honoured`` says that it is honoured."""
    model = OfflineProvider(language=language, today=TODAY)
    tools = tuple(tool.spec() for tool in published_registry())
    catalog = NutritionClient(agent.business)
    names: dict[int, str] = {}
    firsts: dict[str, dict[str, Any]] = {}
    history: list[Any] = []
    turns = []
    for message in messages:
        history.append(UserText(message))
        turn = Turn()
        for _ in range(8):
            request = ModelRequest(instructions="", history=tuple(history), tools=tools)
            turn.reply, calls = model.respond(request)
            history.append(AssistantStep(turn.reply, tuple(calls)))
            if not calls:
                break
            results = []
            for call in calls:
                args = dict(call.arguments)
                turn.calls.append((call.name, args))
                if call.name == "search_foods":
                    foods = catalog.search_foods(query=args["query"])
                    names |= {food["food_id"]: food["name"] for food in foods}
                    got = {"status": "ok", "foods": foods} if foods else {}
                elif call.name == "add_food_to_meal":
                    action = {k: v for k, v in args.items() if k != "again"}
                    key = canonical_arguments(action)
                    if key in firsts and not (args.get("again") and honoured):
                        got = {"status": "duplicate", "first": firsts[key]}
                    else:
                        entry = {
                            **action,
                            "entry_id": len(firsts) + 1,
                            "food": names[args["food_id"]],
                            "grams": number(Decimal(str(args["grams"]))),
                        }
                        got = firsts.setdefault(key, {"status": "ok", "entry": entry})
                else:
                    got = {}
                got = got or {"status": "no_results", "message": "Nothing found."}
                results.append(ToolResult(call.id, got["status"], got, False))
            history.append(ToolResults(tuple(results)))
        turns.append(turn)
    return turns


def rice_id() -> int:
    return Food.objects.get(name=WHITE_RICE).pk


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("es", "Apúntame 100 g de arroz blanco en la comida"),
        ("es", "He almorzado 100 g de arroz blanco"),
        ("en", "Add 100 g of white rice to my lunch"),
    ],
)
def test_a_first_request_carries_no_again(agent, language, said):
    (turn,) = talk(agent, said, language=language)

    assert turn.logged == [
        {"date": TODAY.isoformat(), "meal": "lunch", "food_id": rice_id(), "grams": 100}
    ]


@pytest.mark.parametrize(
    ("language", "first", "then"),
    [
        ("es", "Apúntame 100 g de arroz blanco en la comida", "Apúntame otros 100 g"),
        ("es", "Apúntame 100 g de arroz blanco en la comida", "Otra vez"),
        ("es", "Apúntame 100 g de arroz blanco en la comida", "100 g más"),
        ("es", "Apúntame 100 g de arroz blanco en la comida", "Sí, otra vez"),
        ("es", "Apúntame 100 g de arroz blanco en la comida", "Repítelo"),
        (
            "es",
            "Apúntame 100 g de arroz blanco en la comida",
            "Ponme otra vez lo mismo",
        ),
        (
            "es",
            "Apúntame 100 g de arroz blanco en la comida",
            "Apúntame otros 100 g de arroz blanco en la comida",
        ),
        (
            "en",
            "Add 100 g of white rice to my lunch",
            "Add another 100 g of white rice to lunch",
        ),
        ("en", "Add 100 g of white rice to my lunch", "The same again, please"),
        ("en", "Add 100 g of white rice to my lunch", "100 g more"),
        ("en", "Add 100 g of white rice to my lunch", "Yes, again"),
        ("en", "Add 100 g of white rice to my lunch", "Repeat it, please"),
        ("en", "Add 100 g of white rice to my lunch", "Can you add another 100 g?"),
    ],
)
def test_the_same_food_asked_for_once_more_carries_again(agent, language, first, then):
    """ "Apúntame otros 100 g" right after 100 g of rice was logged was a food
    named "otros"; "otra vez" and "100 g más" were not understood at all; "add
    another 100 g of white rice" was the same call, which R7 answers as a
    duplicate. "Sí, otra vez" read "si" as a food, and "repítelo" was not
    understood."""
    logged, again = talk(agent, first, then, language=language)

    assert again.logged == [{**logged.logged[0], "again": True}]
    assert again.reply.startswith(
        ("Anotado: 100 g de Arroz blanco", "Logged: 100 g of Arroz blanco")
    )


def test_another_portion_asked_for_in_a_first_request_carries_again(agent):
    """She may have logged the first portion elsewhere: "another" is hers to say."""
    (turn,) = talk(agent, "Add another 100 g of white rice to lunch", language="en")

    assert [args.get("again") for args in turn.logged] == [True]


@pytest.mark.parametrize(
    ("then", "food", "meal", "day", "grams"),
    [
        ("Otros 50 g", WHITE_RICE, "lunch", TODAY.isoformat(), 50),
        ("100 g más en la cena de mañana", WHITE_RICE, "dinner", TOMORROW, 100),
        (
            "Apúntame otros 150 g de pollo",
            "Pechuga de pollo a la plancha",
            "lunch",
            TODAY.isoformat(),
            150,
        ),
    ],
)
def test_what_is_said_with_the_again_words_is_as_said(
    agent, then, food, meal, day, grams
):
    """The food, grams, meal or day said are those; what is not said is the
    food just logged's."""
    _, again = talk(agent, "Apúntame 100 g de arroz blanco en la comida", then)

    (args,) = again.logged
    assert (
        Food.objects.get(pk=args["food_id"]).name,
        args["meal"],
        args["date"],
        args["grams"],
        args["again"],
    ) == (food, meal, day, grams, True)


def test_again_after_being_asked_which_food_carries_again(agent):
    """ "Añade otros 150 g de arroz" is asked which rice: the answer logs it with
    ``again``, and "otra vez" after it logs that rice, not one of the two."""
    asked, chosen, again = talk(
        agent, "Añade otros 150 g de arroz a mi comida", "el blanco", "otra vez"
    )

    assert asked.reply.startswith("Hay varios en el catálogo:")
    assert not asked.logged
    assert [(a["food_id"], a["grams"], a["again"]) for a in chosen.logged] == [
        (rice_id(), 150, True)
    ]
    assert again.logged == chosen.logged


@pytest.mark.parametrize(
    ("language", "first", "question"),
    [
        (
            "es",
            "Apúntame 100 g de arroz blanco en la comida",
            "¿Cuál tiene más carbohidratos, el arroz blanco o el integral?",
        ),
        (
            "en",
            "Add 100 g of white rice to my lunch",
            "Which has more protein, chicken or salmon?",
        ),
    ],
)
def test_a_question_with_more_after_a_food_logged_logs_nothing(
    agent, language, first, question
):
    _, asked = talk(agent, first, question, language=language)

    assert asked.calls
    assert {name for name, _ in asked.calls} == {"search_foods"}


@pytest.mark.parametrize(
    ("first", "then"),
    [
        # Which of the two again?
        ("Añade 100 g de arroz blanco y 150 g de pollo a la cena", "Otra vez"),
        # 150 what? Never the grams logged before.
        ("Apúntame 100 g de arroz blanco en la comida", "Apúntame otros 150"),
        # A question, not a request.
        ("Apúntame 100 g de arroz blanco en la comida", "¿Otra vez?"),
    ],
)
def test_again_that_is_not_clear_logs_nothing_on_a_guess(agent, first, then):
    _, again = talk(agent, first, then)

    assert not again.logged


@pytest.mark.parametrize(
    ("language", "said", "then", "told"),
    [
        (
            "es",
            "Apúntame 100 g de arroz blanco en la comida",
            "Apúntalo otra vez",
            "Eso ya estaba hecho; no lo he repetido.",
        ),
        (
            "en",
            "Add 100 g of white rice to my lunch",
            "Add it again",
            "That was already done; I did not do it again.",
        ),
    ],
)
def test_the_same_request_said_twice_is_told_done_then_again_logs_it(
    agent, language, said, then, told
):
    """The same words twice carry no ``again``: the duplicate is told as one,
    never as a new entry; asked once more after it, it is logged again."""
    first, twice, again = talk(agent, said, said, then, language=language)

    assert twice.logged == first.logged
    assert twice.reply == told
    assert again.logged == [{**first.logged[0], "again": True}]
    assert again.reply.startswith(("Anotado: 100 g", "Logged: 100 g"))


def test_a_duplicate_of_a_request_with_again_is_told_as_such(agent):
    """Should a repeat with ``again`` come back a duplicate all the same (R7
    honours it at most once per message), it is told as done before, never as
    logged."""
    _, again = talk(
        agent,
        "Apúntame 100 g de arroz blanco en la comida",
        "Apúntame otros 100 g",
        honoured=False,
    )

    assert again.logged[0]["again"] is True
    assert again.reply == "Eso ya estaba hecho; no lo he repetido."


def test_another_portion_asked_for_is_a_second_entry(client, agent):
    """Through the dispatcher: the second 100 g is a new entry, not the first
    one's duplicate."""
    started = member_conversation(client, agent)
    send(client, started, "Apúntame 100 g de arroz blanco en la comida")
    assert MealEntry.objects.count() == 1

    reply = reply_to(send(client, started, "Apúntame otros 100 g"))

    assert [(e.food.name, e.grams, e.meal) for e in MealEntry.objects.all()] == [
        (WHITE_RICE, 100, "lunch"),
        (WHITE_RICE, 100, "lunch"),
    ]
    assert reply.startswith(f"Anotado: 100 g de {WHITE_RICE} en la comida del ")
    calls = ToolCallLog.objects.filter(tool_name="add_food_to_meal")
    proposed = [json.loads(c.arguments_raw) for c in calls.order_by("created_at")]
    assert [args.get("again") for args in proposed] == [None, True]
