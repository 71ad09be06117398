"""The demo model and the member's bookings: it lists them when asked, cancels
the one she points at, never guesses which, and never tells a booking she
cancelled as made."""

from __future__ import annotations

import datetime

import pytest

from gymnasia.classes.models import Booking, ClassSession, ClassType
from gymnasia.gyms.selectors import business_today
from tests.agents.api_client import identity, send, start
from tests.agents.offline_kit import (
    LATER,
    cancelled_told,
    classes_on_a_later_day,
    member_conversation,
    reply_to,
    with_one_booking,
)
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué tengo reservado?",
        "¿Cuáles son mis reservas?",
        "¿Tengo alguna reserva?",
        "What have I booked?",
        "Do I have any bookings?",
        "What did I book?",
        "¿Qué clases tengo?",
        "Do I have any classes?",
    ],
)
def test_asking_about_bookings_lists_them_and_books_nothing(client, agent, question):
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la segunda")
    assert Booking.objects.get().session_id == sessions[1].pk

    reply = reply_to(send(client, started, question))

    assert Booking.objects.count() == 1
    assert reply.startswith("Tus reservas:")
    assert f"Spinning {day} 09:00" in reply
    asked = ToolCallLog.objects.order_by("created_at").last()
    assert asked.tool_name == "list_my_bookings"


def test_asking_about_bookings_with_none_says_so(client, agent):
    started = member_conversation(client, agent)

    reply = reply_to(send(client, started, "¿Qué tengo reservado?"))

    assert reply == "No tienes ninguna reserva de clases por venir."
    assert not Booking.objects.exists()


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué tengo el {day}?",
        "What do I have on {day}?",
        "¿Tengo clase el {day}?",
        "Do I have a class on {day}?",
    ],
)
def test_asking_what_she_has_on_a_day_lists_that_days_bookings(client, agent, question):
    """ "¿Qué tengo mañana?" got the list of what the assistant can do, and "Do I
    have a class tomorrow?" listed her bookings of every day."""
    day, _ = classes_on_a_later_day(agent, "Yoga")
    other_day, _ = classes_on_a_later_day(agent, "Pilates", later=LATER + 1)
    started = member_conversation(client, agent)
    for booked in (day, other_day):
        send(client, started, f"¿Qué clases hay el {booked}?")
        send(client, started, "Reserva la primera")
    assert Booking.objects.count() == 2

    reply = reply_to(send(client, started, question.format(day=day)))

    # She talks in Spanish (her language, whatever words she uses).
    assert reply == f"Tus reservas:\n- Yoga {day} 08:00 (Sala 1)"
    assert Booking.objects.count() == 2
    asked = ToolCallLog.objects.order_by("created_at").last()
    assert asked.tool_name == "list_my_bookings"


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        (
            "¿Cuál es mi próxima clase?",
            "Tu próxima clase: Yoga el {day} 08:00 en Sala 1.",
        ),
        ("When is my next class?", "Tu próxima clase: Yoga el {day} 08:00 en Sala 1."),
    ],
)
def test_her_next_class_is_the_soonest_of_her_bookings(client, agent, asked, answer):
    """ "¿Cuál es mi próxima clase?" listed the gym's classes."""
    day, _ = classes_on_a_later_day(agent, "Yoga")
    other_day, _ = classes_on_a_later_day(agent, "Pilates", later=LATER + 1)
    started = member_conversation(client, agent)
    for booked in (other_day, day):  # the later one first
        send(client, started, f"¿Qué clases hay el {booked}?")
        send(client, started, "Reserva la primera")

    reply = reply_to(send(client, started, asked))

    assert reply == answer.format(day=day)
    assert Booking.objects.count() == 2


def test_a_day_with_no_booking_of_hers_is_said_so(client, agent):
    started = with_one_booking(client, agent)
    free_day = (
        business_today(business=agent.business) + datetime.timedelta(days=LATER + 2)
    ).isoformat()

    asked = reply_to(send(client, started, f"¿Qué tengo el {free_day}?"))
    asked_in_english = reply_to(
        send(client, started, f"Do I have a class on {free_day}?")
    )

    assert asked == f"No tienes ninguna clase reservada el {free_day}."
    assert asked_in_english == asked


def test_what_she_has_in_her_diary_on_a_day_is_still_her_diary(client, agent):
    started = member_conversation(client, agent)
    send(client, started, "Añade 150 g de arroz blanco a mi comida")

    reply = reply_to(send(client, started, "¿Qué tengo hoy en el diario?"))

    assert reply.startswith("Tu diario del ")
    asked = ToolCallLog.objects.order_by("created_at").last()
    assert asked.tool_name == "get_meal_diary"


def test_cancel_that_booking_cancels_the_one_just_made(client, agent):
    """With an earlier booking of hers also to come, "cancel that booking" right
    after a booking cancels that one, not the earliest."""
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la primera")
    send(client, started, f"¿Qué clases hay el {day}?")
    send(client, started, "Reserva la última")

    reply = reply_to(send(client, started, "Cancela esa reserva"))

    assert reply == cancelled_told()
    statuses = {b.session_id: b.status for b in Booking.objects.all()}
    assert statuses == {sessions[0].pk: "confirmed", sessions[2].pk: "cancelled"}


def test_cancel_the_second_booking_cancels_the_second_to_come(client, agent):
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning", "Pilates")
    started = member_conversation(client, agent)
    for place in ("primera", "segunda", "tercera"):
        send(client, started, f"¿Qué clases hay el {day}?")
        send(client, started, f"Reserva la {place}")
    send(client, started, "¿Qué tengo reservado?")

    reply = reply_to(send(client, started, "Cancela mi segunda reserva"))
    too_far = reply_to(send(client, started, "Cancela mi cuarta reserva"))

    assert reply == cancelled_told()
    statuses = {b.session_id: b.status for b in Booking.objects.all()}
    assert statuses == {
        sessions[0].pk: "confirmed",
        sessions[1].pk: "cancelled",
        sessions[2].pk: "confirmed",
    }
    assert too_far == "No tienes tantas reservas."
    assert Booking.objects.filter(status="confirmed").count() == 2


@pytest.mark.parametrize(
    "text", ["Cancela todas mis reservas", "Cancel all my bookings"]
)
def test_cancel_all_cancels_none_and_says_how(client, agent, text):
    """One call cancels one booking; "all" is never answered with a partial done."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    for place in ("primera", "segunda"):
        send(client, started, f"¿Qué clases hay el {day}?")
        send(client, started, f"Reserva la {place}")

    reply = reply_to(send(client, started, text))

    assert reply.startswith("Las reservas se cancelan de una en una")
    assert Booking.objects.filter(status="confirmed").count() == 2


@pytest.mark.parametrize(
    "text",
    [
        "Cambia mi reserva al jueves",
        "Move my booking",
        # The booking just made, pointed at (these got the list of what the
        # assistant can do).
        "Cámbiala a la de las 7:30",
        "Actually, move it to the 7:30 one",
        "Switch it to Thursday",
    ],
)
def test_a_booking_to_move_is_explained_not_half_done(client, agent, text):
    """Moving is a cancellation and a booking; the demo model makes neither alone."""
    started = with_one_booking(client, agent)
    calls = ToolCallLog.objects.count()

    reply = reply_to(send(client, started, text))

    assert reply.startswith("Para cambiar una reserva, cancela la que tienes")
    assert ToolCallLog.objects.count() == calls
    assert Booking.objects.filter(status="confirmed").count() == 1


def test_cancel_the_one_of_a_kind_named_without_the_word_booking(client, agent):
    started = with_one_booking(client, agent)

    reply = reply_to(send(client, started, "Cancela la de yoga"))

    assert reply == cancelled_told()
    assert Booking.objects.get().status == "cancelled"


def test_cancel_my_booking_with_several_asks_which_then_cancels_the_one_named(
    client, agent
):
    """It cancelled the soonest of her bookings."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva yoga el {day}")
    send(client, started, f"Reserva pilates el {day}")

    asked = reply_to(send(client, started, "Cancela mi reserva"))

    assert asked == (
        f"Tienes varias: Yoga {day} 08:00, Pilates {day} 09:00. ¿Cuál cancelo? "
        "Dímelo, por ejemplo: «cancela mi reserva de yoga»."
    )
    assert Booking.objects.filter(status="confirmed").count() == 2

    send(client, started, "Cancela mi reserva de pilates")

    assert Booking.objects.get(status="cancelled").session.class_type.name == "Pilates"


def test_two_bookings_of_one_class_are_told_apart_by_their_day(client, agent):
    day, _ = classes_on_a_later_day(agent, "Spinning")
    next_day = datetime.date.fromisoformat(day) + datetime.timedelta(days=1)
    ClassSession.objects.create(
        business=agent.business,
        class_type=ClassType.objects.get(business=agent.business, name="Spinning"),
        starts_at=datetime.datetime.combine(
            next_day, datetime.time(8), tzinfo=agent.business.zone
        ),
        ends_at=datetime.datetime.combine(
            next_day, datetime.time(8, 45), tzinfo=agent.business.zone
        ),
        capacity=10,
        instructor="Marta Gil",
        room="Sala 1",
    )
    started = member_conversation(client, agent)
    send(client, started, f"Reserva spinning el {day}")
    send(client, started, f"Reserva spinning el {next_day}")

    asked = reply_to(send(client, started, "Cancela mi reserva de spinning"))

    assert asked.endswith(f"«cancela mi reserva de spinning del {day}».")
    assert not Booking.objects.filter(status="cancelled").exists()

    send(client, started, f"Cancela mi reserva de spinning del {next_day}")

    cancelled = Booking.objects.get(status="cancelled")
    assert cancelled.session.starts_at.date() == next_day


@pytest.mark.parametrize(
    "said", ["Bórrame la clase de yoga", "Quítame la reserva de yoga"]
)
def test_a_booking_taken_away_in_other_words_is_cancelled(client, agent, said):
    """ "Bórrame la clase de spinning" listed the classes."""
    started = with_one_booking(client, agent)

    reply = reply_to(send(client, started, said))

    assert reply == cancelled_told()
    assert Booking.objects.get().status == "cancelled"


def test_a_booking_named_by_its_day_is_cancelled(client, agent):
    """ "Cancela la del …" was not understood."""
    started = with_one_booking(client, agent)
    day = Booking.objects.get().session.starts_at.astimezone(agent.business.zone).date()

    reply = reply_to(send(client, started, f"Cancela la del {day}"))

    assert reply == cancelled_told()
    assert Booking.objects.get().status == "cancelled"


UNDONE = (
    "No lo he hecho: lo mismo se hizo y se deshizo hace un momento, y durante diez "
    "minutos no puedo repetirlo igual desde aquí. Vuelve a pedírmelo más tarde, o "
    "pide hablar con una persona del equipo."
)


def test_cancel_it_cancels_the_booking_just_made_and_when_says_its_time(client, agent):
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva spinning el {day}")

    when = reply_to(send(client, started, "¿A qué hora es?"))
    cancelled = reply_to(send(client, started, "Cancélala"))

    assert when == f"Spinning es el {day} 09:00 en Sala 1."
    assert cancelled == cancelled_told()
    assert Booking.objects.get(session=sessions[1]).status == "cancelled"


@pytest.mark.parametrize(
    ("sub", "asked"),
    [
        ("socio-1003", "Was my yoga class cancelled?"),
        ("socio-1001", "¿Está cancelada mi clase de yoga?"),
        ("socio-1001", "¿Me habéis anulado la reserva de yoga?"),
        ("socio-1003", "Has my yoga booking been deleted?"),
    ],
)
def test_asking_whether_a_booking_was_cancelled_cancels_nothing(
    client, agent, sub, asked
):
    """ "Was my yoga class cancelled?" cancelled it: "cancel" started
    "cancelled", and the question was taken for the request."""
    day, _ = classes_on_a_later_day(agent, "Yoga")
    started = start(client, agent, identity_token=identity(agent, sub=sub))
    send(client, started, f"Reserva yoga el {day}")
    assert Booking.objects.get().status == "confirmed"

    send(client, started, asked)

    assert Booking.objects.get().status == "confirmed"
    assert not ToolCallLog.objects.filter(tool_name="cancel_booking").exists()


def test_cancel_it_after_a_list_of_one_booking_cancels_that_one(client, agent):
    day, sessions = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva yoga el {day}")
    send(client, started, "¿Qué tengo reservado?")

    reply = reply_to(send(client, started, "Cancélala"))

    assert reply == cancelled_told()
    assert Booking.objects.get(session=sessions[0]).status == "cancelled"


def test_cancel_it_with_nothing_just_said_cancels_nothing(client, agent):
    day, _ = classes_on_a_later_day(agent, "Yoga")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva yoga el {day}")
    send(client, started, "¿Cuántas calorías tiene el plátano?")

    send(client, started, "Cancélala")

    assert Booking.objects.get().status == "confirmed"


def test_booking_again_what_was_just_cancelled_is_never_told_as_done(client, agent):
    """R7 answers the repeat with the first booking, which she cancelled: she
    hears that nothing was done, and why, not "that was already done"."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Spinning")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva spinning el {day}")
    send(client, started, "Cancélala")

    reply = reply_to(send(client, started, f"Reserva spinning el {day}"))

    assert reply == UNDONE
    assert not Booking.objects.filter(status="confirmed").exists()
    last = ToolCallLog.objects.filter(tool_name="book_class").latest("created_at")
    assert last.status == "duplicate"


def test_unsubscribing_from_a_class_is_cancelling_its_booking(client, agent):
    started = with_one_booking(client, agent)

    reply = reply_to(send(client, started, "Quiero darme de baja de la clase de yoga"))

    assert reply == cancelled_told()
    assert Booking.objects.get().status == "cancelled"


@pytest.mark.parametrize("said", ["Cancela las dos", "Cancel both"])
def test_both_bookings_are_cancelled_one_at_a_time(client, agent, said):
    """ "Cancela las dos" right after her bookings were listed was not
    understood."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva yoga el {day}")
    send(client, started, f"Reserva pilates el {day}")
    send(client, started, "¿Qué tengo reservado?")

    reply = reply_to(send(client, started, said))

    assert reply.startswith("Las reservas se cancelan de una en una")
    assert set(Booking.objects.values_list("status", flat=True)) == {"confirmed"}


def test_the_one_at_two_is_not_both(client, agent):
    """ "La de las dos" is a class at two o'clock."""
    day, _ = classes_on_a_later_day(agent, "Yoga", "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva yoga el {day}")

    reply = reply_to(send(client, started, "Cancela la de las dos"))

    assert not reply.startswith("Las reservas se cancelan de una en una")


@pytest.mark.parametrize(
    "said",
    [
        "¿Cancelo la de pilates o mejor no?",
        "Quizás cancele pilates",
        "A lo mejor anulo la de pilates",
        "Maybe I should cancel pilates",
    ],
)
def test_a_cancellation_only_thought_about_is_explained_not_made(client, agent, said):
    """ "¿Cancelo la de pilates o mejor no?" cancelled it."""
    day, _ = classes_on_a_later_day(agent, "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva pilates el {day}")

    reply = reply_to(send(client, started, said))

    assert reply.startswith("Si quieres cancelar tu plaza en Pilates")
    assert Booking.objects.get().status == "confirmed"


def test_the_polite_imperative_still_cancels(client, agent):
    """ "Cancele" is also how one asks politely: it is no hesitation."""
    day, _ = classes_on_a_later_day(agent, "Pilates")
    started = member_conversation(client, agent)
    send(client, started, f"Reserva pilates el {day}")

    reply = reply_to(send(client, started, "Por favor, cancele mi reserva de pilates"))

    assert reply == cancelled_told()
    assert Booking.objects.get().status == "cancelled"


def test_a_booking_of_a_day_she_has_none_on_is_said_so_not_none_at_all(client, agent):
    """ "Cancela la del viernes" with a booking on another day said she had no
    booking at all."""
    started = with_one_booking(client, agent)
    later = business_today(business=agent.business) + datetime.timedelta(days=LATER + 1)

    reply = reply_to(send(client, started, f"Cancela la del {later.isoformat()}"))

    assert reply == f"No tienes ninguna reserva el {later.isoformat()}."
    assert Booking.objects.filter(status="confirmed").count() == 1
