"""The staff inbox in the staff's language: outcomes, cases, decisions and
arguments in words, never the codes recorded (they read in English before)."""

from __future__ import annotations

import re
from importlib import import_module

import pytest
from django.apps import apps

from approvals.services import pending_action_approve, pending_action_execute
from tests.approvals.inbox_kit import unknown_food_write
from tests.approvals.test_pending_actions import request_freeze
from tests.factories import StaffRoleFactory
from tests.faults import Fault, inject_fault
from tools.models import Handoff, ToolCallLog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]


@pytest.mark.parametrize(
    ("requests", "told"),
    [(1, "1 solicitud aprobada."), (2, "2 solicitudes aprobadas.")],
    ids=["one", "two"],
)
def test_approving_selected_requests_says_how_many_in_the_staffs_language(
    staff_client, world, requests, told
):
    """One request approved reads "1 solicitud aprobada.", in the singular (it
    read "1 solicitudes aprobadas.")."""
    # given pending requests
    actions = [
        request_freeze(world, 10 * n, 10 * n + 2) for n in range(1, 1 + requests)
    ]

    # when Spanish staff approve them all at once
    response = staff_client.post(
        "/inbox/approve-selected",
        {"ids": [a.pk for a in actions]},
        headers={"Accept-Language": "es"},
        follow=True,
    )

    # then the page says how many, in the right number
    assert told in response.content.decode()


def _row(page: str, action: ToolCallLog) -> str:
    """The inbox's row of one request."""
    return page.split(f'id="action-{action.pk}"', 1)[1].split("</tr>", 1)[0]


def test_an_executed_requests_outcome_reads_in_the_staffs_language(staff_client, world):
    """Spanish staff read how an approved request ran in words, "hecho /
    verificado", with the recorded codes kept for the curious in a title (it
    read "ok / verified")."""
    # given a request approved and executed
    action = request_freeze(world)
    staff = StaffRoleFactory(business=world.business, role="staff").user
    pending_action_approve(action_id=action.pk, user=staff)
    assert pending_action_execute(action_id=action.pk) == "succeeded"

    # when Spanish staff list the requests done
    page = staff_client.get(
        "/inbox/?status=succeeded", headers={"Accept-Language": "es"}
    ).content.decode()

    # then its execution reads in Spanish words
    row = _row(page, action)
    assert "ejecución: hecho / verificado" in row
    assert "ok / verified" not in row


def _case_row(page: str, handoff: Handoff) -> str:
    """The cases list's row of one case, its words only: the tags (and the
    arguments' names in their titles) left out."""
    row = page.split(f'id="handoff-{handoff.pk}"', 1)[1].split("</tr>", 1)[0]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row))


def test_a_case_whose_outcome_is_unknown_reads_in_the_staffs_language(
    staff_client, world
):
    """A write nobody knows the outcome of is named by the tool's title and says
    what is known in Spanish (it read "Could not confirm add_food_to_meal." and
    "The request was sent and no answer came back; it may have been done.")."""
    # given a write whose answer never came back
    handoff = unknown_food_write(world)

    # when Spanish staff open the cases
    page = staff_client.get(
        "/inbox/handoffs/", headers={"Accept-Language": "es"}
    ).content.decode()

    # then the case reads in Spanish, with the tool's title
    case = _case_row(page, handoff)
    assert "No se ha podido confirmar: Añadir un alimento al diario." in case
    assert "Se envió la petición y no llegó respuesta; puede que se haya hecho." in case
    assert "Could not confirm" not in case
    assert "add_food_to_meal" not in case


def test_a_member_asking_for_a_person_reads_in_the_staffs_language(staff_client, world):
    """A member's own request for a person shows their words and says, in
    Spanish, that they asked for a person (it read "The member asked for a
    person.")."""
    # given a member who asked for a person
    world.call("handoff_to_staff", {"reason": "Quiero hablar con alguien"})
    handoff = Handoff.objects.get()

    # when Spanish staff open the cases
    page = staff_client.get(
        "/inbox/handoffs/", headers={"Accept-Language": "es"}
    ).content.decode()

    # then the member's words are shown, and what is known is in Spanish
    case = _case_row(page, handoff)
    assert "Quiero hablar con alguien" in case
    assert "El socio ha pedido hablar con una persona." in case
    assert "asked for a person" not in case


@pytest.mark.parametrize(
    ("reason", "known", "tried", "title", "said"),
    [
        (
            "Could not confirm freeze_membership.",
            "The integration answered that it was done, but looking again could "
            "not confirm it.",
            {"tool": "freeze_membership"},
            "No se ha podido confirmar: Congelar la cuota.",
            "La integración respondió que estaba hecho, pero al volver a mirar no "
            "se ha podido confirmar.",
        ),
        (
            "Could not confirm the approved freeze_membership.",
            "The approved action started and its worker stopped before recording "
            "the outcome; it may or may not have been done.",
            {"tool": "freeze_membership"},
            "No se ha podido confirmar la solicitud aprobada: Congelar la cuota.",
            "La acción aprobada empezó y su proceso se detuvo antes de anotar el "
            "resultado; puede que se haya hecho o no.",
        ),
        (
            "Could not confirm book_class.",
            "The handler stopped with KeyError; it may have acted.",
            {"tool": "book_class"},
            "No se ha podido confirmar: Reservar una clase.",
            "El programa se detuvo con un fallo (KeyError) mientras hacía el "
            "cambio; puede que lo haya hecho.",
        ),
        (
            "Could not confirm freeze_membership.",
            "",
            {"tool": "freeze_membership"},
            "Could not confirm freeze_membership.",
            "",
        ),
        (
            "Quiero hablar con alguien",
            "The member asked for a person.",
            {},
            "Quiero hablar con alguien",
            "El socio ha pedido hablar con una persona.",
        ),
        (
            "Algo que nadie reconoce",
            "Tal cual",
            {},
            "Algo que nadie reconoce",
            "Tal cual",
        ),
    ],
    ids=[
        "not confirmed",
        "worker stopped",
        "handler failed",
        "no words of what is known: as recorded",
        "member asked",
        "words no code knows",
    ],
)
def test_a_case_recorded_in_english_words_reads_in_the_staffs_language(
    staff_client, world, reason, known, tried, title, said
):
    """Cases recorded before their cause was a code kept English words: the
    migration that made causes codes gives those the harness wrote their cause,
    so they read in Spanish too, their words kept as recorded. Words no code
    knows are shown as recorded."""
    # given a case recorded with English words, when causes became codes
    handoff = Handoff.objects.create(
        business=world.business,
        member=world.member,
        conversation_key="conversation-1",
        reason=reason,
        known=known,
        tried=tried,
    )
    import_module("tools.migrations.0005_handoff_cause").causes_filled(apps, None)

    # when Spanish staff open the cases
    page = staff_client.get(
        "/inbox/handoffs/", headers={"Accept-Language": "es"}
    ).content.decode()

    # then it reads in Spanish, and the record is unchanged
    case = _case_row(page, handoff)
    assert f" {title} " in case
    assert said in case
    handoff.refresh_from_db()
    assert (handoff.reason, handoff.known) == (reason, known)


def test_a_meal_reads_in_the_staffs_language_and_is_corrected_as_recorded(
    staff_client, world
):
    """Spanish staff read the meal of a request in words, «en la cena» (it read
    the argument's value, "dinner"); the correction form offers the meals in words,
    each sending the value the tool takes, the request's chosen."""
    # given a request to add food to a meal waiting for approval, and a case of
    # one whose answer never came back
    arguments = {
        "date": world.day(0),
        "meal": "dinner",
        "food_id": world.ids["food_id:oats"],
        "grams": 40,
    }
    world.call("add_food_to_meal", arguments, offered={"add_food_to_meal": "gated"})
    action = ToolCallLog.objects.get(expires_at__isnull=False)
    with inject_fault("nutrition", Fault.TIMEOUT_AFTER_COMMIT):
        world.call("add_food_to_meal", {**arguments, "grams": 50}, call_id="call-2")
    handoff = Handoff.objects.get()

    # when Spanish staff open the requests and the cases
    requests = staff_client.get("/inbox/", headers={"Accept-Language": "es"})
    cases = staff_client.get("/inbox/handoffs/", headers={"Accept-Language": "es"})

    # then the meal reads "Cena"; the correction form chooses among the meals
    row = _row(requests.content.decode(), action)
    assert "Apuntar 40 g de Copos de avena en la cena del " in row
    assert re.findall(r'<option value="(\w+)"( selected)?>(\w+)</option>', row) == [
        ("breakfast", "", "Desayuno"),
        ("lunch", "", "Comida"),
        ("dinner", " selected", "Cena"),
        ("snack", "", "Tentempié"),
    ]
    case = cases.content.decode().split(f'id="handoff-{handoff.pk}"', 1)[1]
    assert "Apuntar 50 g de Copos de avena en la cena del " in case
