"""A call's verification-log steps, as owners and staff read them: what each check
found, in words."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from tests.factories import StaffRoleFactory
from tools.models import Handoff, ToolCallLog
from tools.presentation import (
    call_step_described,
    call_steps_described,
    handoff_described,
)


@pytest.mark.parametrize(
    ("step", "english", "spanish"),
    [
        ({"step": "offered", "offered": True}, "offered", "ofrecida"),
        ({"step": "offered", "offered": False}, "not offered", "no ofrecida"),
        ({"step": "validated", "valid": False}, "arguments invalid", None),
        ({"step": "duplicate", "first": None}, "not a repeat", "no es una repetición"),
        ({"step": "duplicate", "first": "7a1c"}, "repeats an earlier call", None),
        ({"step": "gated", "pending_action": "1"}, "waits for approval", None),
        (
            {"step": "attempt", "number": 2, "error": "OutcomeUnknown"},
            "attempt 2 failed (no answer)",
            "el intento 2 falló (sin respuesta)",
        ),
        (
            {"step": "attempt", "number": 1, "error": "KeyError"},
            "attempt 1 failed (a fault in the program: KeyError)",
            "el intento 1 falló (un fallo del programa: KeyError)",
        ),
        (
            {"step": "attempt", "number": 1, "status": "ok"},
            "ran (done)",
            "ejecutada (hecho)",
        ),
        (
            {"step": "attempt", "number": 1, "status": "something new"},
            "ran (something new)",
            "ejecutada (something new)",
        ),
        (
            {"step": "verified", "verification": "verified"},
            "looked again: verified",
            "comprobada de nuevo: verificado",
        ),
        (
            {"step": "verified", "verification": "unverifiable"},
            "looked again: could not be checked",
            "comprobada de nuevo: no se pudo comprobar",
        ),
        ({"step": "settled by staff", "resolution": "done"}, "settled by staff", None),
        ({"step": "something new"}, "something new", "something new"),
    ],
)
def test_each_step_says_what_it_found(step, english, spanish):
    with translation.override("en"):
        assert call_step_described(step) == english
    if spanish:
        with translation.override("es"):
            assert call_step_described(step) == spanish


def test_times_where_recorded_and_rows_that_are_not_steps_left_out():
    steps = [
        {"step": "offered", "offered": True, "ms": 0.01},
        "not a step",
        {"step": "settled by staff"},
    ]
    with translation.override("en"):
        assert call_steps_described(steps, times=True) == [
            "offered (0.01 ms)",
            "settled by staff",
        ]
        assert call_steps_described(steps) == ["offered", "settled by staff"]
        assert call_steps_described(None) == []


@pytest.mark.django_db
def test_a_tool_calls_admin_page_says_its_steps_in_words(client, world, settings):
    settings.LANGUAGE_CODE = "en"
    world.call("search_foods", {"query": "arroz"}, call_id="call-1")
    log = ToolCallLog.objects.get()
    client.force_login(StaffRoleFactory(business=world.business, role="owner").user)

    page = client.get(f"/admin/tools/toolcalllog/{log.pk}/change/")

    assert page.status_code == 200
    assert re.search(
        r"offered \([\d.]+ ms\) → arguments valid \([\d.]+ ms\) → ran \(done\)",
        page.content.decode(),
    )


@pytest.mark.django_db
def test_the_tool_calls_list_shows_the_latest_first(client, world):
    world.call("search_foods", {"query": "arroz"}, call_id="call-old")
    world.call("search_foods", {"query": "avena"}, call_id="call-new")
    old, new = ToolCallLog.objects.order_by("created_at")
    client.force_login(StaffRoleFactory(business=world.business, role="owner").user)

    page = client.get("/admin/tools/toolcalllog/").content.decode()

    assert page.index(f"/admin/tools/toolcalllog/{new.pk}/") < page.index(
        f"/admin/tools/toolcalllog/{old.pk}/"
    )


@pytest.mark.parametrize(
    ("cause", "tried", "title", "known"),
    [
        (
            "no_answer",
            {"tool": "book_class"},
            "No se ha podido confirmar: Reservar una clase.",
            "Se envió la petición y no llegó respuesta; puede que se haya hecho.",
        ),
        (
            "handler_failed",
            {"tool": "book_class", "error": "KeyError"},
            "No se ha podido confirmar: Reservar una clase.",
            "El programa se detuvo con un fallo (KeyError) mientras hacía el "
            "cambio; puede que lo haya hecho.",
        ),
        (
            "not_confirmed",
            {"tool": "refund_payment"},
            "No se ha podido confirmar: Devolver un pago con tarjeta.",
            "La integración respondió que estaba hecho, pero al volver a mirar no "
            "se ha podido confirmar.",
        ),
        (
            "worker_stopped",
            {"tool": "freeze_membership"},
            "No se ha podido confirmar la solicitud aprobada: Congelar la cuota.",
            "La acción aprobada empezó y su proceso se detuvo antes de anotar el "
            "resultado; puede que se haya hecho o no.",
        ),
        (
            "turn_stopped",
            {"tool": "add_food_to_meal"},
            "No se ha podido confirmar: Añadir un alimento al diario.",
            "El turno del asistente se detuvo mientras se hacía este cambio y no "
            "llegó a anotar el resultado; puede que se haya hecho o no.",
        ),
        (
            "turn_stopped",
            {"tool": "a_tool_of_tomorrow"},
            "No se ha podido confirmar: a_tool_of_tomorrow.",
            "El turno del asistente se detuvo mientras se hacía este cambio y no "
            "llegó a anotar el resultado; puede que se haya hecho o no.",
        ),
    ],
)
def test_a_case_reads_in_words_from_its_cause(cause, tried, title, known):
    """Each cause of a case reads in the reader's language, the tool by its
    title (a tool without one, by its name)."""
    # given a case recorded with its cause as a code and no words
    handoff = Handoff(cause=cause, tried=tried)

    # when it is described in Spanish
    with translation.override("es"):
        described = handoff_described(handoff)

    # then it says what it is about and what is known
    assert (described.title, described.known) == (title, known)
