"""R10: the verdict sentences that code puts before the member's reply.

The reply is the text of the model's final step. When a write of the turn was not
verified, the fixed sentence of each case that applies goes first, then a blank line,
whatever the model wrote. Cases are judged per write tool on the last call of that
tool in the turn (so a corrected retry that verified is not contradicted), except that
an unknown or unverifiable outcome always counts; a duplicate counts as its first call,
except that one whose first still waits for approval has a sentence of its own
(nothing was sent to staff again).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tools.registry import published_registry
from tools.types import (
    DUPLICATE,
    OK,
    PENDING_APPROVAL,
    UNKNOWN_OUTCOME,
    UNVERIFIABLE,
    VERIFIED,
)

WAITS = "waits"
ALREADY_WAITS = "already_waits"
NOT_DONE = "not_done"
NOT_CONFIRMED = "not_confirmed"
CASES = (WAITS, ALREADY_WAITS, NOT_DONE, NOT_CONFIRMED)

SENTENCES = {
    "es": {
        WAITS: (
            "He enviado tu solicitud al equipo del gimnasio; te avisaré aquí cuando "
            "la revisen."
        ),
        ALREADY_WAITS: (
            "Tu solicitud ya está con el equipo del gimnasio; te avisaré aquí cuando "
            "la revisen."
        ),
        NOT_DONE: "No he podido hacer el cambio que pediste.",
        NOT_CONFIRMED: (
            "No he podido confirmar que el cambio se haya guardado; una persona del "
            "equipo lo revisará."
        ),
    },
    "en": {
        WAITS: (
            "I have sent your request to the gym's staff; I will tell you here once "
            "they review it."
        ),
        ALREADY_WAITS: (
            "Your request is already with the gym's staff; I will tell you here once "
            "they review it."
        ),
        NOT_DONE: "I could not make the change you asked for.",
        NOT_CONFIRMED: (
            "I could not confirm that the change was saved; a member of staff will "
            "check it."
        ),
    },
}


def _case(payload: Mapping[str, Any]) -> str | None:
    if payload.get("status") == DUPLICATE:
        payload = payload.get("first") or {"status": UNKNOWN_OUTCOME}
        if payload.get("status") == PENDING_APPROVAL:
            return ALREADY_WAITS
    status = payload.get("status")
    verification = payload.get("verification")
    if status == UNKNOWN_OUTCOME or verification == UNVERIFIABLE:
        return NOT_CONFIRMED
    if status == PENDING_APPROVAL:
        return WAITS
    if status == OK and verification == VERIFIED:
        return None
    return NOT_DONE


def counts_for_verdict(name: str) -> bool:
    """Whether a call of the tool ``name`` is judged by R10: a write tool's."""
    tool = published_registry().get(name)
    return tool is not None and tool.is_write


def verdict_cases(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """The cases that apply to a turn's tool calls, given as (tool name, result
    payload) in the order they ran; reads and unknown names do not count."""
    last: dict[str, str | None] = {}
    always: set[str] = set()
    for name, payload in calls:
        if not counts_for_verdict(name):
            continue
        case = _case(payload)
        last[name] = case
        if case == NOT_CONFIRMED:
            always.add(case)
    applying = {case for case in last.values() if case} | always
    return [case for case in CASES if case in applying]


def verdict_prefix(cases: list[str], language: str) -> str:
    """The sentences of the cases, then a blank line; empty when nothing applies."""
    if not cases:
        return ""
    sentences = SENTENCES.get(language, SENTENCES["en"])
    return " ".join(sentences[case] for case in cases) + "\n\n"
