"""A refusal's code and parameters in plain words, in the member's language
(issue 33, point 5)."""

from __future__ import annotations

import pytest
from django.utils.translation import override

from gymnasia.refusals import SENTENCES, refusal_said, refusals_said


def said(language: str, code: str, field: str | None = None, **params) -> str:
    with override(language):
        return refusal_said({"code": code, "field": field, "params": params})


@pytest.mark.parametrize(
    ("refusal", "spanish", "english"),
    [
        (
            ("more_than", "grams", {"limit": 0}),
            "La cantidad tiene que ser mayor que 0 g.",
            "The amount has to be more than 0 g.",
        ),
        (
            ("at_most", "grams", {"limit": 5000}),
            "La cantidad puede ser como máximo 5000 g.",
            "The amount can be at most 5000 g.",
        ),
        (
            ("not_one_of", "meal", {"choices": ["breakfast", "lunch"]}),
            "La comida tiene que ser una de estas: desayuno, comida.",
            "The meal has to be one of: breakfast, lunch.",
        ),
        (
            ("not_a_date", "start", {}),
            "La fecha de inicio tiene que ser una fecha como 2027-03-01.",
            "The start date has to be a date like 2027-03-01.",
        ),
        (
            ("missing", "end", {}),
            "Falta la fecha de fin.",
            "The end date is missing.",
        ),
        (
            ("over_limit", "amount", {"limit": "20.50"}),
            "El importe supera el límite de este gimnasio, 20,50.",
            "The amount is above this gym's limit of 20.50.",
        ),
        (
            ("freeze_overlaps", None, {"start": "2027-08-01", "end": "2027-08-10"}),
            "Se solapa con tu congelación del 1 de agosto de 2027 al 10 de agosto "
            "de 2027.",
            "It overlaps your freeze from 1 August 2027 to 10 August 2027.",
        ),
        (
            ("class_full", None, {}),
            "Esa clase está completa.",
            "That class is full.",
        ),
        (
            ("wrong_type", "session_id", {"expected": "integer"}),
            "No he sabido a cuál te refieres.",
            "I could not tell which one you mean.",
        ),
    ],
)
def test_a_refusal_is_said_in_each_language(refusal, spanish, english):
    code, field, params = refusal
    assert said("es", code, field, **params) == spanish
    assert said("en", code, field, **params) == english


@pytest.mark.parametrize("code", sorted(SENTENCES))
def test_every_code_has_spanish_words(code):
    """No sentence of the catalogue reaches a Spanish member in English."""
    names = "limit max choices ends start end back ahead days rest waiting currency"
    params = {name: "1" for name in [*names.split(), "expected"]}
    spanish, english = (
        said("es", code, "grams", **params),
        said("en", code, "grams", **params),
    )
    assert spanish != english


def test_an_unknown_code_is_a_general_honest_sentence():
    assert said("es", "a_code_of_tomorrow", "grams") == (
        "No se ha podido hacer con esos datos."
    )
    assert (
        said("en", "a_code_of_tomorrow") == "It could not be done with those details."
    )


def test_parameters_that_do_not_fill_the_sentence_give_the_general_one():
    """A refusal missing a parameter its sentence needs is never half-said."""
    assert said("es", "freeze_overlaps", None, start="2027-08-01") == (
        "No se ha podido hacer con esos datos."
    )


def test_several_refusals_are_said_one_after_another_once_each():
    refusals = [
        {"code": "missing", "field": "end", "params": {}},
        {"code": "class_full", "field": None, "params": {}},
        {"code": "class_full", "field": None, "params": {}},
    ]
    with override("es"):
        assert (
            refusals_said(refusals) == "Falta la fecha de fin. Esa clase está completa."
        )
        assert refusals_said([]) == "No se ha podido hacer con esos datos."
