"""R10: which verdict sentences a turn's write results call for."""

from __future__ import annotations

from agents.verdict import (
    ALREADY_WAITS,
    NOT_CONFIRMED,
    NOT_DONE,
    WAITS,
    verdict_cases,
    verdict_prefix,
)

OK = {"status": "ok", "verification": "verified"}
FAILED = {"status": "failed", "verification": "not_applied"}
INVALID = {"status": "invalid_arguments", "verification": "not_applied"}
PENDING = {"status": "pending_approval", "verification": "not_applied"}
UNKNOWN = {"status": "unknown_outcome", "verification": "unverifiable"}


def test_every_write_verified_needs_no_sentence():
    assert verdict_cases([("book_class", OK), ("search_foods", {"status": "ok"})]) == []


def test_each_kind_of_result_has_its_case():
    for payload, case in [
        (FAILED, NOT_DONE),
        (INVALID, NOT_DONE),
        ({"status": "not_found", "verification": "not_applied"}, NOT_DONE),
        ({"status": "unavailable", "verification": "not_applied"}, NOT_DONE),
        (PENDING, WAITS),
        (UNKNOWN, NOT_CONFIRMED),
    ]:
        assert verdict_cases([("book_class", payload)]) == [case]


def test_a_corrected_retry_that_verified_is_not_contradicted():
    assert verdict_cases([("book_class", INVALID), ("book_class", OK)]) == []


def test_an_unknown_outcome_always_counts():
    assert verdict_cases([("book_class", UNKNOWN), ("book_class", OK)]) == [
        NOT_CONFIRMED
    ]


def test_a_duplicate_counts_as_its_first_call():
    for first, case in [(OK, None), (FAILED, NOT_DONE), (UNKNOWN, NOT_CONFIRMED)]:
        duplicate = {"status": "duplicate", "first": first, "verification": "x"}
        assert verdict_cases([("book_class", duplicate)]) == ([case] if case else [])


def test_a_duplicate_whose_first_still_waits_is_already_with_staff():
    """Nothing was sent again: R10's "already waits", not "I have sent"."""
    duplicate = {"status": "duplicate", "first": PENDING, "verification": "not_applied"}
    assert verdict_cases([("freeze_membership", duplicate)]) == [ALREADY_WAITS]


def test_cases_of_several_tools_come_in_the_table_order():
    calls = [
        ("freeze_membership", UNKNOWN),
        ("book_class", FAILED),
        ("cancel_booking", PENDING),
    ]
    assert verdict_cases(calls) == [WAITS, NOT_DONE, NOT_CONFIRMED]


def test_reads_and_unknown_names_do_not_count():
    assert verdict_cases([("search_foods", FAILED), ("nonexistent", FAILED)]) == []


# R10's table in DESIGN.md, word for word.
DESIGN_SENTENCES = {
    ("es", WAITS): "He enviado tu solicitud al equipo del gimnasio; te avisaré aquí "
    "cuando la revisen.",
    ("es", ALREADY_WAITS): "Tu solicitud ya está con el equipo del gimnasio; te "
    "avisaré aquí cuando la revisen.",
    ("es", NOT_DONE): "No he podido hacer el cambio que pediste.",
    ("es", NOT_CONFIRMED): "No he podido confirmar que el cambio se haya guardado; "
    "una persona del equipo lo revisará.",
    ("en", WAITS): "I have sent your request to the gym's staff; I will tell you here "
    "once they review it.",
    ("en", ALREADY_WAITS): "Your request is already with the gym's staff; I will "
    "tell you here once they review it.",
    ("en", NOT_DONE): "I could not make the change you asked for.",
    ("en", NOT_CONFIRMED): "I could not confirm that the change was saved; a member "
    "of staff will check it.",
}


def test_each_sentence_is_design_s_word_for_word():
    for (language, case), sentence in DESIGN_SENTENCES.items():
        assert verdict_prefix([case], language) == sentence + "\n\n"


def test_the_sentences_in_both_languages_then_a_blank_line():
    assert verdict_prefix([WAITS], "es") == (
        "He enviado tu solicitud al equipo del gimnasio; te avisaré aquí cuando la "
        "revisen.\n\n"
    )
    assert (
        verdict_prefix([NOT_DONE], "en")
        == "I could not make the change you asked for.\n\n"
    )
    assert verdict_prefix([NOT_CONFIRMED], "es") == (
        "No he podido confirmar que el cambio se haya guardado; una persona del equipo "
        "lo revisará.\n\n"
    )
    assert verdict_prefix([], "es") == ""
