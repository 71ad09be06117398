"""A decision is worth no more than the decider's right to decide now: a
deactivated account, or a role removed, decides nothing by any way in (a link
mailed earlier, the inbox's forms, the decision service itself); it is refused in
words and changes nothing (rows counted)."""

from __future__ import annotations

import pytest

from approvals.events import events_announce
from approvals.links import decision_link
from approvals.models import Decision, StaffNotice
from approvals.services import (
    handoff_settle,
    pending_action_approve,
    pending_action_correct,
    pending_action_reject,
)
from gymnasia.errors import NotAllowed, NotFound
from tests.approvals.test_links import opened
from tests.approvals.test_pending_actions import request_freeze
from tests.factories import StaffRoleFactory, UserFactory
from tools.models import Handoff

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(world):
    return StaffRoleFactory(
        business=world.business, role="owner", user=UserFactory(email="eva@example.com")
    )


@pytest.fixture
def mailed(world, owner):
    """A request, and the approve and reject links mailed to ``owner``."""
    call = request_freeze(world)
    events_announce()
    notice = StaffNotice.objects.get(role=owner, call=call)
    return call, decision_link(notice, "approve"), decision_link(notice, "reject")


def deactivate(role) -> None:
    role.user.is_active = False
    role.user.save(update_fields=["is_active"])


def test_a_link_of_a_deactivated_account_decides_nothing(
    client, mailed, owner, row_counts, no_broker
):
    """Opening then confirming an approval mailed before the account was
    deactivated approved it, recorded as the inactive user's decision."""
    call, approve, reject = mailed
    deactivate(owner)
    before = row_counts()

    shown = client.get(opened(client, approve))
    approved = client.post(opened(client, approve))
    rejected = client.post(opened(client, reject), {"reason": "no"})

    for page in (shown, approved, rejected):
        assert page.status_code == 403
        assert "ya no puede decidir" in page.text
        assert "No se ha cambiado nada" in page.text
    assert row_counts() == before
    call.refresh_from_db()
    assert call.status == "pending_approval"
    assert StaffNotice.objects.filter(call=call, used_at__isnull=False).count() == 0
    assert no_broker == []


def test_a_link_deactivated_between_the_page_and_its_post_decides_nothing(
    client, mailed, owner, row_counts, no_broker
):
    call, approve, _ = mailed
    page = opened(client, approve)
    assert client.get(page).status_code == 200
    deactivate(owner)
    before = row_counts()

    refused = client.post(page)

    assert refused.status_code == 403 and "ya no puede decidir" in refused.text
    assert row_counts() == before
    call.refresh_from_db()
    assert call.status == "pending_approval"
    assert no_broker == []


def test_a_link_of_a_removed_role_decides_nothing(
    client, mailed, owner, row_counts, no_broker
):
    call, approve, _ = mailed
    owner.delete()
    before = row_counts()

    page = client.post(opened(client, approve))

    assert page.status_code == 404 and "no es válido" in page.text
    assert row_counts() == before
    call.refresh_from_db()
    assert call.status == "pending_approval"


@pytest.mark.parametrize(
    "decide", [pending_action_approve, pending_action_reject], ids=["approve", "reject"]
)
def test_the_decision_service_refuses_a_deactivated_account(
    world, owner, decide, row_counts, no_broker
):
    """Any caller of the one decision service (a script, a page left open) is
    held to the decider's right now."""
    call = request_freeze(world)
    deactivate(owner)
    before = row_counts()

    with pytest.raises(NotAllowed, match="se desactivó"):
        decide(action_id=call.pk, user=owner.user)

    assert row_counts() == before
    assert not Decision.objects.filter(call=call).exists()
    assert no_broker == []


def test_a_correction_by_a_deactivated_account_is_refused(
    world, owner, row_counts, no_broker
):
    call = request_freeze(world)
    deactivate(owner)
    before = row_counts()

    with pytest.raises(NotAllowed):
        pending_action_correct(
            action_id=call.pk,
            user=owner.user,
            arguments={"start": world.day(11), "end": world.day(19)},
        )

    assert row_counts() == before


def test_the_decision_service_refuses_a_removed_role(
    world, owner, row_counts, no_broker
):
    call = request_freeze(world)
    user = owner.user
    owner.delete()
    before = row_counts()

    with pytest.raises(NotFound):
        pending_action_approve(action_id=call.pk, user=user)

    assert row_counts() == before


def test_the_inbox_of_a_deactivated_account_decides_nothing(
    client, world, owner, row_counts, no_broker
):
    """A session opened before the deactivation is no longer signed in."""
    call = request_freeze(world)
    client.force_login(owner.user)
    deactivate(owner)
    before = row_counts()

    response = client.post(f"/inbox/{call.pk}/approve")

    assert response.status_code == 302 and "/admin/login/" in response.url
    assert row_counts() == before
    assert no_broker == []


def test_a_user_read_before_the_deactivation_decides_nothing(
    world, owner, row_counts, no_broker
):
    """The right is read now, from the database, not from the caller's copy."""
    call = request_freeze(world)
    user = owner.user  # read while active
    type(user).objects.filter(pk=user.pk).update(is_active=False)
    before = row_counts()

    with pytest.raises(NotAllowed):
        pending_action_approve(action_id=call.pk, user=user)

    assert row_counts() == before


def test_a_deactivated_account_settles_no_case(world, owner, row_counts):
    world.call("handoff_to_staff", {"reason": "Quiero hablar con alguien"})
    case = Handoff.objects.get()
    deactivate(owner)
    before = row_counts()

    with pytest.raises(NotAllowed):
        handoff_settle(handoff_id=case.pk, user=owner.user, resolution="done")

    assert row_counts() == before
    case.refresh_from_db()
    assert case.status == "open"
