"""The class schedule and booking services."""

from __future__ import annotations

import datetime
import threading

import pytest
from django.db import connection
from django.utils import timezone

from gymnasia.classes.models import Booking
from gymnasia.classes.selectors import bookings_upcoming, class_sessions_between
from gymnasia.classes.services import (
    booking_cancel,
    booking_create,
    class_session_schedule,
)
from gymnasia.errors import Conflict, InvalidValue, NotFound
from gymnasia.memberships.models import Membership, MembershipFreeze
from tests.factories import (
    BusinessFactory,
    ClassSessionFactory,
    ClassTypeFactory,
    MemberFactory,
    MembershipFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def member():
    return MembershipFactory().member


@pytest.fixture
def session(member):
    return ClassSessionFactory(business=member.business, capacity=2)


def book(member, session):
    return booking_create(
        business=member.business, member=member, session_id=session.pk
    )


def test_booking_create_confirms_a_place(member, session):
    booking = book(member, session)
    booking.refresh_from_db()
    assert (booking.member, booking.session, booking.status) == (
        member,
        session,
        "confirmed",
    )


def test_booking_create_refuses_a_full_class(member, session, row_counts):
    for _ in range(session.capacity):
        book(MembershipFactory(member__business=member.business).member, session)
    before = row_counts()
    with pytest.raises(Conflict):
        book(member, session)
    assert row_counts() == before


def test_booking_create_refuses_a_double_booking(member, session, row_counts):
    book(member, session)
    before = row_counts()
    with pytest.raises(Conflict):
        book(member, session)
    assert row_counts() == before


def test_booking_create_refuses_a_started_class(member, row_counts):
    started = ClassSessionFactory(
        business=member.business,
        starts_at=timezone.now() - datetime.timedelta(minutes=5),
    )
    before = row_counts()
    with pytest.raises(InvalidValue):
        book(member, started)
    assert row_counts() == before


def test_booking_create_refuses_a_cancelled_class(member, row_counts):
    cancelled = ClassSessionFactory(business=member.business, is_cancelled=True)
    before = row_counts()
    with pytest.raises(InvalidValue):
        book(member, cancelled)
    assert row_counts() == before


def test_booking_create_refuses_another_business_session(member, row_counts):
    foreign = ClassSessionFactory(business=BusinessFactory())
    before = row_counts()
    with pytest.raises(NotFound):
        book(member, foreign)
    assert row_counts() == before


def test_booking_create_refuses_an_unknown_session(member, row_counts):
    before = row_counts()
    with pytest.raises(NotFound):
        booking_create(business=member.business, member=member, session_id=987654)
    assert row_counts() == before


def test_booking_create_refuses_a_member_without_membership(session, row_counts):
    walk_in = MemberFactory(business=session.business)
    before = row_counts()
    with pytest.raises(InvalidValue):
        book(walk_in, session)
    assert row_counts() == before


def test_booking_create_refuses_a_day_of_freeze(member, session, row_counts):
    membership = Membership.objects.get(member=member)
    day = timezone.localtime(session.starts_at, member.business.zone).date()
    MembershipFreeze.objects.create(
        business=member.business, membership=membership, start=day, end=day
    )
    before = row_counts()
    with pytest.raises(InvalidValue):
        book(member, session)
    assert row_counts() == before


def test_booking_create_again_after_cancelling(member, session):
    first = book(member, session)
    booking_cancel(business=member.business, member=member, booking_id=first.pk)
    second = book(member, session)
    assert second.pk != first.pk
    assert Booking.objects.filter(session=session, status="confirmed").count() == 1


def test_booking_cancel_frees_the_place(member, session):
    booking = book(member, session)
    cancelled = booking_cancel(
        business=member.business, member=member, booking_id=booking.pk
    )
    assert cancelled.status == "cancelled" and cancelled.cancelled_at is not None
    assert list(bookings_upcoming(business=member.business, member=member)) == []


def test_booking_cancel_twice_changes_nothing(member, session):
    booking = book(member, session)
    first = booking_cancel(
        business=member.business, member=member, booking_id=booking.pk
    )
    second = booking_cancel(
        business=member.business, member=member, booking_id=booking.pk
    )
    assert first.cancelled_at == second.cancelled_at


def test_booking_cancel_refuses_another_members_booking(member, session, row_counts):
    other = MembershipFactory(member__business=member.business).member
    booking = book(other, session)
    before = row_counts()
    with pytest.raises(NotFound):
        booking_cancel(business=member.business, member=member, booking_id=booking.pk)
    assert row_counts() == before
    booking.refresh_from_db()
    assert booking.status == "confirmed"


def test_booking_cancel_refuses_a_started_class(member, session):
    booking = book(member, session)
    type(session).objects.filter(pk=session.pk).update(
        starts_at=timezone.now() - datetime.timedelta(minutes=1)
    )
    with pytest.raises(InvalidValue):
        booking_cancel(business=member.business, member=member, booking_id=booking.pk)
    booking.refresh_from_db()
    assert booking.status == "confirmed"


def test_class_session_schedule_refuses_bad_times(member, row_counts):
    class_type = ClassTypeFactory(business=member.business)
    start = timezone.now() + datetime.timedelta(days=2)
    before = row_counts()
    with pytest.raises(InvalidValue):
        class_session_schedule(
            business=member.business,
            class_type=class_type,
            starts_at=start,
            ends_at=start,
            capacity=5,
        )
    with pytest.raises(InvalidValue):
        class_session_schedule(
            business=member.business,
            class_type=class_type,
            starts_at=start,
            ends_at=start + datetime.timedelta(hours=1),
            capacity=0,
        )
    with pytest.raises(NotFound):
        class_session_schedule(
            business=BusinessFactory(),
            class_type=class_type,
            starts_at=start,
            ends_at=start + datetime.timedelta(hours=1),
            capacity=5,
        )
    assert row_counts()["classes.ClassSession"] == before["classes.ClassSession"]


def test_class_sessions_between_leaves_out_what_already_started(member):
    """Today's list shows the classes still to come: one under way cannot be
    booked, so it is not listed with places as if it could."""
    now = timezone.now()
    started, coming = (
        ClassSessionFactory(business=member.business, starts_at=now + delta)
        for delta in (-datetime.timedelta(minutes=5), datetime.timedelta(minutes=5))
    )
    days = {
        timezone.localtime(s.starts_at, member.business.zone).date()
        for s in (started, coming)
    }
    listed = class_sessions_between(
        business=member.business, date_from=min(days), date_to=max(days)
    )
    assert [s.pk for s in listed] == [coming.pk]


def test_class_sessions_between_counts_booked_places(member, session):
    book(member, session)
    day = timezone.localtime(session.starts_at, member.business.zone).date()
    [listed] = class_sessions_between(
        business=member.business, date_from=day, date_to=day
    )
    assert (listed.pk, listed.booked) == (session.pk, 1)


def test_class_sessions_between_marks_the_members_own_places(member, session):
    other = MemberFactory(business=member.business)
    book(member, session)
    day = timezone.localtime(session.starts_at, member.business.zone).date()

    [hers] = class_sessions_between(
        business=member.business, date_from=day, date_to=day, member=member
    )
    [theirs] = class_sessions_between(
        business=member.business, date_from=day, date_to=day, member=other
    )

    assert (hers.member_booked, theirs.member_booked) == (True, False)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_booking_create_last_places_race():
    """Twelve members racing for three places: exactly three get one."""
    business = BusinessFactory()
    session = ClassSessionFactory(business=business, capacity=3)
    members = [MembershipFactory(member__business=business).member for _ in range(12)]
    barrier = threading.Barrier(len(members))
    outcomes: list[str] = []

    def attempt(member):
        try:
            barrier.wait()
            book(member, session)
            outcomes.append("booked")
        except Conflict:
            outcomes.append("full")
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(m,)) for m in members]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["booked"] * 3 + ["full"] * 9
    assert Booking.objects.filter(session=session, status="confirmed").count() == 3
