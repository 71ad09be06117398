"""The membership freeze service."""

from __future__ import annotations

import datetime
import threading

import pytest
from django.db import connection

from gymnasia.errors import Conflict, DomainError, InvalidValue, NotFound
from gymnasia.gyms.selectors import business_today
from gymnasia.memberships.models import Membership, MembershipFreeze
from gymnasia.memberships.selectors import membership_current, membership_state_on
from gymnasia.memberships.services import membership_create, membership_freeze
from tests.factories import BusinessFactory, MemberFactory, MembershipFactory

pytestmark = pytest.mark.django_db

DAY = datetime.timedelta(days=1)


@pytest.fixture
def membership():
    return MembershipFactory()


@pytest.fixture
def today(membership):
    return business_today(business=membership.business)


def freeze(membership, start, end):
    return membership_freeze(
        business=membership.business, member=membership.member, start=start, end=end
    )


def test_membership_freeze_pauses_and_extends(membership, today):
    ends_before = membership.ends_on
    result = freeze(membership, today + 10 * DAY, today + 19 * DAY)
    membership.refresh_from_db()
    assert (result.start, result.end, result.days) == (
        today + 10 * DAY,
        today + 19 * DAY,
        10,
    )
    assert membership.ends_on == ends_before + 10 * DAY
    assert membership_state_on(membership=membership, day=today + 12 * DAY) == "frozen"
    assert membership_state_on(membership=membership, day=today + 20 * DAY) == "active"


def test_membership_freeze_refuses_end_before_start(membership, today, row_counts):
    before = row_counts()
    with pytest.raises(InvalidValue):
        freeze(membership, today + 5 * DAY, today + 4 * DAY)
    assert row_counts() == before


def test_membership_freeze_refuses_the_past(membership, today, row_counts):
    before = row_counts()
    with pytest.raises(InvalidValue):
        freeze(membership, today - DAY, today + 4 * DAY)
    assert row_counts() == before


def test_membership_freeze_refuses_too_long(membership, today, row_counts):
    before = row_counts()
    with pytest.raises(InvalidValue):
        freeze(membership, today, today + 90 * DAY)
    assert row_counts() == before


def test_membership_freeze_refuses_an_overlap(membership, today, row_counts):
    freeze(membership, today + 10 * DAY, today + 19 * DAY)
    membership.refresh_from_db()
    ends_on = membership.ends_on
    before = row_counts()
    with pytest.raises(Conflict):
        freeze(membership, today + 19 * DAY, today + 25 * DAY)
    assert row_counts() == before
    membership.refresh_from_db()
    assert membership.ends_on == ends_on


def test_membership_freeze_refuses_after_the_end(membership, row_counts):
    start = membership.ends_on + DAY
    before = row_counts()
    with pytest.raises(InvalidValue):
        freeze(membership, start, start + DAY)
    assert row_counts() == before


def test_membership_freeze_without_membership_is_not_found(today, row_counts):
    member = MemberFactory()
    before = row_counts()
    with pytest.raises(NotFound):
        membership_freeze(
            business=member.business, member=member, start=today, end=today
        )
    assert row_counts() == before


def test_membership_freeze_of_a_cancelled_membership_is_not_found(
    membership, today, row_counts
):
    Membership.objects.filter(pk=membership.pk).update(status="cancelled")
    before = row_counts()
    with pytest.raises(NotFound):
        freeze(membership, today + DAY, today + 2 * DAY)
    assert row_counts() == before


def test_membership_freeze_refuses_another_business_member(
    membership, today, row_counts
):
    other_gym = BusinessFactory()
    before = row_counts()
    with pytest.raises(NotFound):
        membership_freeze(
            business=other_gym, member=membership.member, start=today, end=today
        )
    assert row_counts() == before


def test_membership_current_prefers_the_one_not_cancelled(membership):
    later_cancelled = MembershipFactory(
        member=membership.member,
        status="cancelled",
        ends_on=membership.ends_on + 100 * DAY,
    )
    assert (
        membership_current(business=membership.business, member=membership.member)
        == membership
    )
    assert later_cancelled.status == "cancelled"


def test_membership_create_refuses_backwards_dates(row_counts):
    member = MemberFactory()
    today = business_today(business=member.business)
    before = row_counts()
    with pytest.raises(InvalidValue):
        membership_create(
            business=member.business,
            member=member,
            plan="x",
            starts_on=today,
            ends_on=today - DAY,
        )
    assert row_counts() == before


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_membership_freeze_overlap_race():
    """Eight overlapping freezes at once: exactly one is saved."""
    membership = MembershipFactory()
    today = business_today(business=membership.business)
    barrier = threading.Barrier(8)
    errors: list[DomainError] = []

    def attempt(offset):
        try:
            barrier.wait()
            freeze(membership, today + (10 + offset) * DAY, today + (20 + offset) * DAY)
        except Conflict as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(errors) == 7
    assert MembershipFreeze.objects.filter(membership=membership).count() == 1
