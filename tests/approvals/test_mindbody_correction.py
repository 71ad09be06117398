"""Correcting a waiting ``book_class`` of a gym whose classes are in Mindbody:
the choices are Mindbody's classes of that name with a free place, read through
the real client from the fake Mindbody on loopback, never Gymnasia's own
sessions; the corrected request books the Mindbody class once when approved."""

from __future__ import annotations

import pytest

from approvals.forms import CorrectionForm
from approvals.services import pending_action_approve, pending_action_execute
from gymnasia.classes.models import ClassSession
from tests.factories import StaffRoleFactory
from tests.fakes.mindbody_server import mindbody_fake, mindbody_settings  # noqa: F401
from tests.tools.mindbody_world import class_at, client_of, connect_mindbody
from tools.models import ToolCallLog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]

BOOK = "/class/addclienttoclass"


@pytest.fixture
def gym(world, mindbody_settings):  # noqa: F811
    """Spinning in Mindbody: the asked class, a later one with room, a full one,
    one already begun, and a Yoga class; the member is a client there."""
    fake = mindbody_settings
    world.integration = connect_mindbody(world.business, fake)
    world.client = client_of(fake, world.member)
    stranger = str(fake.add_client(client_id="900001", first_name="Otra"))
    world.fake = fake
    at = {"name": "Spinning"}
    world.classes = {
        "asked": class_at(fake, world.business, days=1, hour=18, **at),
        "later": class_at(fake, world.business, days=3, hour=18, **at),
        "full": class_at(
            fake,
            world.business,
            days=2,
            hour=18,
            capacity=1,
            booked_by=[stranger],
            **at,
        ),
        "begun": class_at(fake, world.business, days=-1, hour=18, **at),
        "yoga": class_at(fake, world.business, days=2, hour=9, name="Yoga"),
    }
    return world


@pytest.fixture
def booking_request(gym):
    result = gym.call(
        "book_class",
        {"session_id": gym.classes["asked"]},
        offered={"book_class": "gated"},
    )
    assert result.status == "pending_approval", result.payload
    return ToolCallLog.objects.get(pk=result.payload["pending_action"])


def test_the_choices_are_mindbodys_classes_of_that_name_with_room(gym, booking_request):
    built_in = set(ClassSession.objects.values_list("pk", flat=True))
    assert built_in  # the world has its own sessions, which must not be offered

    field = CorrectionForm(booking_request).fields["session_id"]

    offered = [value for value, _ in field.choices]
    assert offered == [gym.classes["asked"], gym.classes["later"]]
    assert all(label.startswith("Spinning, ") for _, label in field.choices)
    assert field.initial == gym.classes["asked"]
    assert not field.help_text


def test_a_built_in_session_posted_is_refused_and_changes_nothing(
    gym, booking_request, staff_client, row_counts
):
    session = ClassSession.objects.get(pk=gym.ids["session_id:spinning"])
    before = row_counts()
    response = staff_client.post(
        f"/inbox/{booking_request.pk}/correct",
        {"session_id": session.pk},
        follow=True,
    )
    assert row_counts() == before
    booking_request.refresh_from_db()
    assert booking_request.status == "pending_approval"
    page = response.content.decode()
    assert "Select a valid choice" in page or "Escoja una opción válida" in page


def test_a_correction_books_the_mindbody_class_once_when_approved(
    gym, booking_request, staff_client
):
    later = gym.classes["later"]
    staff_client.post(f"/inbox/{booking_request.pk}/correct", {"session_id": later})
    booking_request.refresh_from_db()
    assert booking_request.status == "superseded"
    corrected = ToolCallLog.objects.get(status="pending_approval")
    assert corrected.arguments == {"session_id": later}
    assert gym.fake.roster(later) == []  # checked as a Test request only

    staff = StaffRoleFactory(business=gym.business, role="staff").user
    pending_action_approve(action_id=corrected.pk, user=staff)
    assert pending_action_execute(action_id=corrected.pk) == "succeeded"
    assert gym.fake.roster(later) == [gym.client]
    assert gym.fake.roster(gym.classes["asked"]) == []
    sent = [r["json"]["Test"] for r in gym.fake.requests if r["path"] == BOOK]
    assert sent.count(False) == 1


def test_mindbody_unreadable_offers_no_session_and_says_so(gym, booking_request):
    gym.fake.fault("GET", "/class/classes", "error_500", times=10)
    field = CorrectionForm(booking_request).fields["session_id"]
    assert field.choices == []
    assert "Mindbody" in str(field.help_text)


def test_a_failing_mindbody_offers_no_built_in_session(gym, booking_request):
    gym.integration.status = "failing"
    gym.integration.save()
    field = CorrectionForm(booking_request).fields["session_id"]
    assert field.choices == []
    assert "Mindbody" in str(field.help_text)


def test_a_cancellation_is_chosen_among_the_members_mindbody_bookings(gym):
    mine = {"booked_by": [gym.client]}
    pilates = class_at(gym.fake, gym.business, days=2, hour=8, name="Pilates", **mine)
    zumba = class_at(gym.fake, gym.business, days=4, hour=8, name="Zumba", **mine)
    visits = {v.class_id: v.id for v in gym.fake.visits}
    result = gym.call(
        "cancel_booking",
        {"booking_id": visits[zumba]},
        offered={"cancel_booking": "gated"},
    )
    assert result.status == "pending_approval", result.payload
    call = ToolCallLog.objects.get(pk=result.payload["pending_action"])
    field = CorrectionForm(call).fields["booking_id"]
    assert [value for value, _ in field.choices] == [visits[pilates], visits[zumba]]
    assert [label.split(",")[0] for _, label in field.choices] == ["Pilates", "Zumba"]


def test_the_inbox_refreshing_asks_mindbody_for_the_choices_once(
    gym, booking_request, staff_client
):
    """The inbox draws a waiting request's correction form at each refresh
    (every 5 seconds); Mindbody bills each call, so its classes are read once
    for a while, not at every refresh."""
    staff_client.get("/inbox/")
    calls = len(gym.fake.requests)

    for _ in range(3):
        page = staff_client.get("/inbox/")
        assert page.status_code == 200
        assert "Spinning" in page.content.decode()

    assert len(gym.fake.requests) == calls
