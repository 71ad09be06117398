"""The offline demo model does what the member asked, not something near it: the
class they pointed at in the list they were shown, the days they named for a
freeze; and a class already under way is neither listed nor booked."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from agents.providers.offline.words import period_named
from agents.verdict import SENTENCES
from gymnasia.classes.models import Booking, ClassSession, ClassType
from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from gymnasia.memberships.models import MembershipFreeze
from gymnasia.nutrition.models import MealEntry
from gymnasia.text import fold
from tests.agents.api_client import identity, send, start
from tools.integrations.faults import Fault, inject_fault
from tools.models import AgentToolSetting, ToolCallLog

pytestmark = pytest.mark.django_db

TODAY = datetime.date(2026, 11, 30)


@pytest.mark.parametrize(
    ("said", "period"),
    [
        ("Congela mi cuota del 1 al 10 de agosto", ("2027-08-01", "2027-08-10")),
        ("freeze my membership from August 3 to 9", ("2027-08-03", "2027-08-09")),
        ("congela del 1 al 10 de diciembre", ("2026-12-01", "2026-12-10")),
        # Days of this month already past: next year's.
        ("congela del 2 al 6 de noviembre", ("2027-11-02", "2027-11-06")),
        ("Congela mi cuota en agosto", ("2027-08-01", "2027-08-31")),
        ("congela 2 semanas en agosto", ("2027-08-01", "2027-08-31")),
        ("pausa 2026-12-03 2026-12-20", ("2026-12-03", "2026-12-20")),
        ("congela del 10 al 1 de agosto", None),
        ("congela del 1 al 31 de febrero", None),
    ],
)
def test_the_period_a_member_names(said, period):
    named = period_named(fold(said), TODAY)
    assert (named and tuple(d.isoformat() for d in named)) == period


def _member_conversation(client, agent):
    return start(client, agent, identity_token=identity(agent, sub="socio-1001"))


def _reply(response) -> str:
    return response.json()["messages"][-1]["text"]


#: A day past the demo's own schedule, with only the classes a test puts there.
LATER = 20


def _classes_on_a_later_day(agent, *kinds: str) -> tuple[str, list[ClassSession]]:
    """Sessions of ``kinds`` in that order, from 08:00 on, on a day of their own."""
    day = business_today(business=agent.business) + datetime.timedelta(days=LATER)
    sessions = []
    for hour, kind in enumerate(kinds, start=8):
        starts = datetime.datetime.combine(
            day, datetime.time(hour), tzinfo=agent.business.zone
        )
        sessions.append(
            ClassSession.objects.create(
                business=agent.business,
                class_type=ClassType.objects.get(business=agent.business, name=kind),
                starts_at=starts,
                ends_at=starts + datetime.timedelta(minutes=45),
                capacity=10,
                instructor="Marta Gil",
                room="Sala 1",
            )
        )
    return day.isoformat(), sessions


def _with_one_booking(client, agent):
    """A member's conversation in which she booked a yoga class of a later day."""
    day, _ = _classes_on_a_later_day(agent, "Yoga")
    started = _member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la primera")
    assert Booking.objects.filter(status="confirmed").count() == 1
    return started


def test_book_the_first_books_the_first_of_the_list_just_shown(client, agent):
    day, sessions = _classes_on_a_later_day(agent, "Yoga", "Spinning", "Pilates")
    started = _member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")

    reply = _reply(send(client, started, "Reserva la primera"))

    assert Booking.objects.get().session_id == sessions[0].pk
    assert reply.startswith("Reserva confirmada: Yoga el ")


def test_book_the_last_of_the_list_just_shown(client, agent):
    day, sessions = _classes_on_a_later_day(agent, "Yoga", "Spinning", "Pilates")
    started = _member_conversation(client, agent)
    send(client, started, f"What classes are there on {day}?")

    reply = _reply(send(client, started, "Book the last one"))

    assert Booking.objects.get().session_id == sessions[-1].pk
    assert reply.startswith("Reserva confirmada: Pilates el ")  # her language


def test_a_place_the_list_does_not_have_books_nothing(client, agent):
    day, _ = _classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = _member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    calls = ToolCallLog.objects.count()

    reply = _reply(send(client, started, "Reserva la tercera"))

    assert reply == "En esa lista no hay tantas clases."
    assert ToolCallLog.objects.count() == calls  # nothing proposed
    assert not Booking.objects.exists()


def test_a_class_under_way_is_neither_listed_nor_booked(client, agent):
    """Without a list to point at, "book the first" means today's first class: one
    still to come, never one under way."""
    now = timezone.now()
    under_way = ClassSession.objects.create(
        business=agent.business,
        class_type=ClassType.objects.filter(business=agent.business).first(),
        starts_at=now - datetime.timedelta(minutes=1),
        ends_at=now + datetime.timedelta(minutes=44),
        capacity=10,
        instructor="Marta Gil",
        room="Sala 1",
    )
    started = _member_conversation(client, agent)

    send(client, started, "Reserva la primera")

    listed = ToolCallLog.objects.get(tool_name="list_classes").result["sessions"]
    assert under_way.pk not in [s["session_id"] for s in listed]
    assert not Booking.objects.filter(session=under_way).exists()
    assert all(b.session.starts_at > now for b in Booking.objects.all())


def test_a_freeze_of_named_days_asks_for_those_days(client, agent):
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, "Congela mi cuota del 1 al 10 de agosto"))

    log = ToolCallLog.objects.get(tool_name="freeze_membership")
    today = business_today(business=agent.business)
    year = today.year + (datetime.date(today.year, 8, 1) <= today)
    assert log.arguments == {"start": f"{year}-08-01", "end": f"{year}-08-10"}
    assert "equipo" in reply
    assert not MembershipFreeze.objects.exists()  # waits for staff approval


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué tengo reservado?",
        "¿Cuáles son mis reservas?",
        "¿Tengo alguna reserva?",
        "What have I booked?",
        "Do I have any bookings?",
    ],
)
def test_asking_about_bookings_lists_them_and_books_nothing(client, agent, question):
    day, sessions = _classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = _member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la segunda")
    assert Booking.objects.get().session_id == sessions[1].pk

    reply = _reply(send(client, started, question))

    assert Booking.objects.count() == 1
    assert reply.startswith("Tus reservas:")
    assert f"Spinning {day} 09:00" in reply
    asked = ToolCallLog.objects.order_by("created_at").last()
    assert asked.tool_name == "list_my_bookings"


def test_asking_about_bookings_with_none_says_so(client, agent):
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, "¿Qué tengo reservado?"))

    assert reply == "No tienes ninguna reserva de clases por venir."
    assert not Booking.objects.exists()


def test_cancel_that_booking_cancels_the_one_just_made(client, agent):
    """With an earlier booking of hers also to come, "cancel that booking" right
    after a booking cancels that one, not the earliest."""
    day, sessions = _classes_on_a_later_day(agent, "Yoga", "Spinning", "Pilates")
    started = _member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la primera")
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la última")

    reply = _reply(send(client, started, "Cancela esa reserva"))

    assert reply == "Reserva cancelada."
    statuses = {b.session_id: b.status for b in Booking.objects.all()}
    assert statuses == {sessions[0].pk: "confirmed", sessions[2].pk: "cancelled"}


def test_food_logged_and_listed_names_the_meal_in_her_language(client, agent):
    started = _member_conversation(client, agent)

    logged = _reply(send(client, started, "Añade 150 g de arroz blanco a mi comida"))
    listed = _reply(send(client, started, "¿Qué he comido hoy?"))

    today = business_today(business=agent.business).isoformat()
    assert logged == (
        f"Anotado: 150 g de Arroz blanco (cocido) en la comida del {today}."
    )
    assert "- Comida: Arroz blanco (cocido), 150 g (195 kcal)" in listed


def test_remove_a_food_from_the_diary_removes_that_entry(client, agent):
    started = _member_conversation(client, agent)
    send(client, started, "Añade 150 g de arroz blanco a mi comida")
    send(client, started, "Añade 120 g de plátano a mi merienda")

    reply = _reply(send(client, started, "Quita el arroz de mi diario"))

    today = business_today(business=agent.business).isoformat()
    assert reply == f"Quitado: 150 g de Arroz blanco (cocido) de la comida del {today}."
    assert [e.food.name for e in MealEntry.objects.all()] == ["Plátano"]


def test_remove_a_meal_says_it_in_good_spanish(client, agent):
    started = _member_conversation(client, agent)
    send(client, started, "Añade 80 g de pan a mi desayuno")

    reply = _reply(send(client, started, "Borra el desayuno de hoy"))

    today = business_today(business=agent.business).isoformat()
    assert reply == f"Quitado: 80 g de Pan blanco del desayuno del {today}."
    assert not MealEntry.objects.exists()


def test_remove_a_food_not_in_the_diary_removes_nothing(client, agent):
    started = _member_conversation(client, agent)
    send(client, started, "Añade 120 g de plátano a mi merienda")

    reply = _reply(send(client, started, "Quita el arroz de mi diario"))

    assert reply == "No encuentro eso en tu diario de ese día."
    assert MealEntry.objects.count() == 1
    assert not ToolCallLog.objects.filter(tool_name="remove_meal_entry").exists()


def test_the_membership_state_is_said_in_her_language(client, agent):
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, "¿Cuándo vence mi cuota?"))

    assert reply.startswith("Tu cuota «Cuota mensual» está activa y termina el ")


def test_an_english_speaking_member_finds_the_catalogs_foods_by_english_names(
    client, agent
):
    """The demo gym's catalog is in Spanish; its English aliases find it."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))

    reply = _reply(send(client, started, "How many carbs does rice have?"))

    assert "Arroz blanco (cocido): 28" in reply
    assert "Arroz integral (cocido): 23.5" in reply
    assert reply.startswith("According to the gym's catalog:")


def test_asking_twice_for_the_same_booking_says_it_was_already_done(client, agent):
    """The second request is the same action (R7): nothing is done again, and the
    member is not told it failed."""
    day, sessions = _classes_on_a_later_day(agent, "Spinning")
    started = _member_conversation(client, agent)
    send(client, started, f"Reserva spinning el {day}")

    reply = _reply(send(client, started, f"Reserva spinning el {day}"))

    assert reply == "Eso ya estaba hecho; no lo he repetido."
    assert Booking.objects.get().session_id == sessions[0].pk
    assert ToolCallLog.objects.filter(status="duplicate").count() == 1


def test_negative_grams_are_refused_not_logged_as_positive(client, agent):
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, "Añade -50 g de arroz a mi cena"))

    assert reply.startswith(SENTENCES["es"]["not_done"])
    assert not MealEntry.objects.exists()
    call = ToolCallLog.objects.get(tool_name="add_food_to_meal")
    assert (call.valid, call.arguments_raw.count("-50")) == (False, 1)


def test_remove_a_food_named_by_an_alias_finds_it_through_the_catalog(client, agent):
    """Emma logged "chicken"; her diary says "Pechuga de pollo a la plancha"."""
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    send(client, started, "Add 200 g of chicken to my dinner")
    send(client, started, "Add 100 g of rice to my dinner")

    reply = _reply(send(client, started, "Remove the chicken from my diary"))

    assert reply.startswith("Removed: 200 g of Pechuga de pollo a la plancha from ")
    assert [e.food.name for e in MealEntry.objects.all()] == ["Arroz blanco (cocido)"]


def test_a_refusal_reaches_her_in_her_language_where_the_app_has_its_words(
    client, agent
):
    """The class filled up between the list and her request: the tool says so in
    English, for the model; she reads it in Spanish."""
    day, [session] = _classes_on_a_later_day(agent, "Spinning")
    ClassSession.objects.filter(pk=session.pk).update(capacity=1)
    started = _member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    other = Member.objects.get(external_id="socio-1002")
    Booking.objects.create(business=agent.business, member=other, session=session)

    reply = _reply(send(client, started, "Reserva la primera"))

    assert reply.endswith("No se ha podido: Esta clase está completa.")
    refused = ToolCallLog.objects.get(tool_name="book_class").result
    assert refused["errors"] == ["This class is full."]


@pytest.mark.parametrize(
    "question", ["¿Qué he comido hoy?", "¿Cuándo vence mi cuota?", "Reserva la primera"]
)
def test_a_visitor_asking_for_member_things_is_asked_to_sign_in(
    client, agent, question
):
    """Member tools are not offered to a visitor (R3); the demo model says how to
    get them, and nothing runs."""
    started = start(client, agent)

    reply = _reply(send(client, started, question))

    assert reply == (
        "Para eso necesito saber quién eres: entra con tu cuenta en la web del "
        "gimnasio y vuelve a preguntármelo."
    )
    assert not ToolCallLog.objects.exists()


def test_a_tool_the_owner_turned_off_is_not_a_matter_of_signing_in(client, agent):
    AgentToolSetting.objects.filter(agent=agent, tool_name="get_membership").update(
        enabled=False
    )
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, "¿Cuándo vence mi cuota?"))

    assert reply.startswith("Eso no lo puedo hacer desde aquí.")
    assert not ToolCallLog.objects.exists()


def test_words_the_app_cannot_translate_are_quoted_as_the_systems(client, agent):
    """A schema's refusal has no Spanish words in the app: she reads it quoted,
    after the R10 sentence, never passed off as the assistant's own Spanish."""
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, "Añade 0 g de pan a mi desayuno"))

    assert reply == (
        SENTENCES["es"]["not_done"] + "\n\nNo se ha podido: "
        "«grams: 0.0 is less than or equal to the minimum of 0»"
    )


def test_a_failed_change_is_told_in_her_language(client, agent):
    started = _member_conversation(client, agent)

    with inject_fault("nutrition", Fault.STORAGE_FAILURE):
        reply = _reply(send(client, started, "Añade 80 g de pan a mi desayuno"))

    assert reply == (
        SENTENCES["es"]["not_done"] + "\n\nHa fallado; no se ha cambiado nada."
    )
    assert not MealEntry.objects.exists()


def test_cancel_the_second_booking_cancels_the_second_to_come(client, agent):
    day, sessions = _classes_on_a_later_day(agent, "Yoga", "Spinning", "Pilates")
    started = _member_conversation(client, agent)
    for place in ("primera", "segunda", "tercera"):
        send(client, started, f"¿Qué clases hay el {day}?")
        send(client, started, f"Reserva la {place}")
    send(client, started, "¿Qué tengo reservado?")

    reply = _reply(send(client, started, "Cancela mi segunda reserva"))
    too_far = _reply(send(client, started, "Cancela mi cuarta reserva"))

    assert reply == "Reserva cancelada."
    statuses = {b.session_id: b.status for b in Booking.objects.all()}
    assert statuses == {
        sessions[0].pk: "confirmed",
        sessions[1].pk: "cancelled",
        sessions[2].pk: "confirmed",
    }
    assert too_far == "No tienes tantas reservas."
    assert Booking.objects.filter(status="confirmed").count() == 2


@pytest.mark.parametrize(
    "declined",
    [
        "No quiero reservar nada",
        "No me reserves ninguna clase",
        "Don't book anything",
        "No quiero hablar con una persona",
        "No canceles mi reserva",
    ],
)
def test_a_declined_change_changes_nothing(client, agent, declined):
    started = _with_one_booking(client, agent)
    calls = ToolCallLog.objects.count()

    reply = _reply(send(client, started, declined))

    assert reply == "De acuerdo: no cambio nada."
    assert ToolCallLog.objects.count() == calls
    assert Booking.objects.filter(status="confirmed").count() == 1


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("¿Puedo reservar una clase?", "Sí: dime qué clase y qué día"),
        ("¿Puedo cancelar una reserva?", "Sí: dime qué reserva"),
        ("¿Se puede cancelar una reserva?", "Sí: dime qué reserva"),
    ],
)
def test_asking_whether_a_change_can_be_made_makes_none(
    client, agent, question, answer
):
    started = _with_one_booking(client, agent)
    calls = ToolCallLog.objects.count()

    reply = _reply(send(client, started, question))

    assert reply.startswith(answer)
    assert ToolCallLog.objects.count() == calls
    assert Booking.objects.filter(status="confirmed").count() == 1


def test_asking_whether_a_named_class_can_be_booked_books_it(client, agent):
    """A question that names the class is a request: a real model would book it."""
    day, [yoga] = _classes_on_a_later_day(agent, "Yoga")
    started = _member_conversation(client, agent)

    send(client, started, f"¿Puedo reservar yoga el {day}?")

    assert Booking.objects.get().session_id == yoga.pk


def test_a_class_named_without_the_word_class_is_listed(client, agent):
    day, _ = _classes_on_a_later_day(agent, "Yoga")
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, f"¿Hay yoga el {day}?"))

    assert reply.startswith(f"Clases:\n- Yoga {day} 08:00 (Sala 1, 10 plazas libres)")
    assert not Booking.objects.exists()


def test_booking_a_class_the_day_does_not_have_says_so(client, agent):
    """Not "no free places": there is no such class that day."""
    day, _ = _classes_on_a_later_day(agent, "Yoga")
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, f"Apúntame a pilates el {day}"))

    assert reply == "No hay clases de ese tipo ese día."
    assert not Booking.objects.exists()


def test_yesterdays_diary(client, agent):
    yesterday = business_today(business=agent.business) - datetime.timedelta(days=1)
    MealEntry.objects.create(
        business=agent.business,
        member=Member.objects.get(external_id="socio-1001"),
        date=yesterday,
        meal="dinner",
        food=agent.business.foods.get(name="Manzana"),
        grams=150,
    )
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, "¿Qué comí ayer?"))

    assert reply.startswith(f"Tu diario del {yesterday.isoformat()}:")
    assert "- Cena: Manzana, 150 g" in reply


def test_a_food_without_grams_is_asked_for_them(client, agent):
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, "Añade una manzana a mi merienda"))

    assert reply.startswith("¿Cuántos gramos?")
    assert not ToolCallLog.objects.exists()


def test_thanks_are_answered(client, agent):
    started = _member_conversation(client, agent)

    assert _reply(send(client, started, "Gracias")) == "¡De nada! ¿Algo más?"


def test_sign_me_up_for_the_first_one_books_it(client, agent):
    day, [yoga] = _classes_on_a_later_day(agent, "Yoga")
    started = start(client, agent, identity_token=identity(agent, sub="socio-1003"))
    send(client, started, f"What classes are there on {day}?")

    reply = _reply(send(client, started, "Sign me up for the first one"))

    assert reply.startswith("Booking confirmed: Yoga on ")
    assert Booking.objects.get().session_id == yoga.pk


@pytest.mark.parametrize(
    "text", ["Cancela todas mis reservas", "Cancel all my bookings"]
)
def test_cancel_all_cancels_none_and_says_how(client, agent, text):
    """One call cancels one booking; "all" is never answered with a partial done."""
    day, _ = _classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = _member_conversation(client, agent)
    for place in ("primera", "segunda"):
        send(client, started, f"¿Qué clases hay el {day}?")
        send(client, started, f"Reserva la {place}")

    reply = _reply(send(client, started, text))

    assert reply.startswith("Las reservas se cancelan de una en una")
    assert Booking.objects.filter(status="confirmed").count() == 2


def test_kilos_are_logged_as_grams(client, agent):
    started = _member_conversation(client, agent)

    reply = _reply(send(client, started, "Añade 1,5 kg de pollo a mi cena"))

    assert reply.startswith(
        "Anotado: 1500 g de Pechuga de pollo a la plancha en la cena"
    )
    assert MealEntry.objects.get().grams == 1500


@pytest.mark.parametrize("text", ["Cambia mi reserva al jueves", "Move my booking"])
def test_a_booking_to_move_is_explained_not_half_done(client, agent, text):
    """Moving is a cancellation and a booking; the demo model makes neither alone."""
    started = _with_one_booking(client, agent)
    calls = ToolCallLog.objects.count()

    reply = _reply(send(client, started, text))

    assert reply.startswith("Para cambiar una reserva, cancela la que tienes")
    assert ToolCallLog.objects.count() == calls
    assert Booking.objects.filter(status="confirmed").count() == 1
