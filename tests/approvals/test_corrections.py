"""Staff correct a request's arguments before approving: a new binding, the
difference recorded, the original superseded, the member told."""

from __future__ import annotations

import pytest

from approvals.models import Decision
from approvals.selectors import request_state
from approvals.services import (
    pending_action_approve,
    pending_action_correct,
    pending_action_execute,
)
from gymnasia.errors import Conflict, InvalidValue, NotFound
from gymnasia.memberships.models import MembershipFreeze
from tests.approvals.test_pending_actions import request_freeze
from tests.factories import BusinessFactory, StaffRoleFactory
from tools.models import ToolCallEvent, ToolCallLog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]


@pytest.fixture
def staff(world):
    return StaffRoleFactory(business=world.business, role="staff").user


def test_a_correction_supersedes_and_runs_with_the_new_arguments(world, staff):
    original = request_freeze(world, 10, 19)
    corrected = pending_action_correct(
        action_id=original.pk,
        user=staff,
        arguments={"start": world.day(12), "end": world.day(19)},
    )
    original.refresh_from_db()
    assert original.status == "superseded"
    assert corrected.status == "pending_approval"
    assert request_state(corrected.status) == "pending"
    assert corrected.pk != original.pk
    assert corrected.action_key != original.action_key
    # Its result names the new request (a repeat's "first" is this result, R7).
    assert corrected.result["pending_action"] == str(corrected.pk)
    difference = {"start": [world.day(10), world.day(12)]}
    decision = Decision.objects.get(call=original)
    assert (decision.kind, decision.decided_by, decision.corrected_to) == (
        Decision.Kind.SUPERSEDED,
        staff,
        corrected,
    )
    assert decision.difference == difference
    superseded = ToolCallEvent.objects.get(call=original, kind="corrected")
    assert superseded.parameters == {"by": str(corrected.pk)}
    assert ToolCallEvent.objects.filter(call=original, kind="superseded").exists()
    proposed = ToolCallEvent.objects.get(call=corrected, kind="proposed")
    assert proposed.parameters == {"corrects": str(original.pk)}
    assert corrected.steps[0]["difference"] == difference
    pending_action_approve(action_id=corrected.pk, user=staff)
    assert pending_action_execute(action_id=corrected.pk) == "succeeded"
    freeze = MembershipFreeze.objects.get()
    assert (freeze.start.isoformat(), freeze.end.isoformat()) == (
        world.day(12),
        world.day(19),
    )
    with pytest.raises(Conflict):
        pending_action_approve(action_id=original.pk, user=staff)


@pytest.mark.parametrize(
    "arguments",
    [
        {"start": "next week", "end": "2027-01-01"},
        {"start": "2027-01-01"},
        {"start": 5, "end": 6},
    ],
)
def test_a_correction_that_breaks_the_schema_changes_nothing(
    world, staff, row_counts, arguments
):
    original = request_freeze(world)
    before = row_counts()
    with pytest.raises(InvalidValue):
        pending_action_correct(action_id=original.pk, user=staff, arguments=arguments)
    assert row_counts() == before
    original.refresh_from_db()
    assert original.status == "pending_approval"


def test_the_same_arguments_are_not_a_correction(world, staff):
    original = request_freeze(world)
    with pytest.raises(InvalidValue):
        pending_action_correct(
            action_id=original.pk, user=staff, arguments=dict(original.arguments)
        )


def test_another_gym_cannot_correct(world, row_counts):
    original = request_freeze(world)
    outsider = StaffRoleFactory(business=BusinessFactory()).user
    before = row_counts()
    with pytest.raises(NotFound):
        pending_action_correct(
            action_id=original.pk,
            user=outsider,
            arguments={"start": world.day(11), "end": world.day(12)},
        )
    assert row_counts() == before


def test_the_inbox_form_corrects(client, world, staff):
    original = request_freeze(world, 10, 19)
    client.force_login(staff)
    client.post(
        f"/inbox/{original.pk}/correct", {"start": world.day(11), "end": world.day(15)}
    )
    corrected = ToolCallLog.objects.get(
        expires_at__isnull=False, status="pending_approval"
    )
    assert corrected.arguments == {"start": world.day(11), "end": world.day(15)}


def test_a_corrected_request_says_so_in_the_staffs_language(client, world, staff):
    """The request a correction superseded reads "corregida en una nueva
    solicitud" under who corrected it (it read the recorded code, "corrected");
    a reason staff wrote for a rejection is shown as they wrote it."""
    # given a request corrected by staff, and another one rejected with a reason
    original = request_freeze(world, 10, 19)
    client.force_login(staff)
    client.post(
        f"/inbox/{original.pk}/correct", {"start": world.day(11), "end": world.day(15)}
    )
    rejected = request_freeze(world, 30, 35, conversation="conversation-2")
    client.post(f"/inbox/{rejected.pk}/reject", {"reason": "Cerrado en agosto"})

    # when Spanish staff list every request
    page = client.get(
        "/inbox/?status=", headers={"Accept-Language": "es"}
    ).content.decode()

    # then the superseded one says it was corrected, in words
    superseded = page.split(f'id="action-{original.pk}"', 1)[1].split("</tr>")[0]
    assert f"{staff}: corregida en una nueva solicitud</small>" in superseded
    assert "corrected" not in superseded
    told = page.split(f'id="action-{rejected.pk}"', 1)[1].split("</tr>")[0]
    assert f"{staff}: Cerrado en agosto</small>" in told


@pytest.mark.parametrize(
    ("start", "end", "refusal"),
    [
        (19, 12, "The freeze cannot end before it starts."),
        (-2, 3, "A freeze cannot start in the past."),
    ],
)
def test_a_correction_that_could_not_be_done_is_refused_and_changes_nothing(
    world, staff, row_counts, start, end, refusal, settings
):
    """Checked now as the request was (R4): staff learn at once, and the member is
    not told of a correction that could never run."""
    settings.LANGUAGE_CODE = "en"
    original = request_freeze(world, 10, 19)
    before = row_counts()

    with pytest.raises(InvalidValue) as refused:
        pending_action_correct(
            action_id=original.pk,
            user=staff,
            arguments={"start": world.day(start), "end": world.day(end)},
        )

    assert str(refused.value) == refusal
    assert row_counts() == before
    original.refresh_from_db()
    assert original.status == "pending_approval"


def test_the_inbox_says_why_a_correction_could_not_be_done(client, world, staff):
    original = request_freeze(world, 10, 19)
    client.force_login(staff)

    page = client.post(
        f"/inbox/{original.pk}/correct",
        {"start": world.day(19), "end": world.day(12)},
        HTTP_ACCEPT_LANGUAGE="es",
        follow=True,
    )

    assert "La congelación no puede terminar antes de empezar." in page.content.decode()
    assert ToolCallLog.objects.get(expires_at__isnull=False).status == (
        "pending_approval"
    )


def test_a_correction_may_move_a_freeze_over_its_own_days(world, staff):
    """The request corrected is not another request in the way."""
    original = request_freeze(world, 10, 19)

    corrected = pending_action_correct(
        action_id=original.pk,
        user=staff,
        arguments={"start": world.day(12), "end": world.day(21)},
    )

    assert corrected.status == "pending_approval"


def test_a_correction_onto_another_waiting_freeze_is_refused(
    world, staff, row_counts, settings
):
    settings.LANGUAGE_CODE = "en"
    request_freeze(world, 10, 19)
    later = request_freeze(world, 30, 35, conversation="conversation-2")
    before = row_counts()

    with pytest.raises(Conflict) as refused:
        pending_action_correct(
            action_id=later.pk,
            user=staff,
            arguments={"start": world.day(18), "end": world.day(25)},
        )

    assert str(refused.value) == (
        f"It overlaps the freeze from {world.day(10)} to {world.day(19)}, which is "
        "waiting for the staff's approval."
    )
    assert row_counts() == before
    later.refresh_from_db()
    assert later.status == "pending_approval"


def test_the_inbox_says_which_waiting_freeze_is_in_the_way(client, world, staff):
    request_freeze(world, 10, 19)
    later = request_freeze(world, 30, 35, conversation="conversation-2")
    client.force_login(staff)

    page = client.post(
        f"/inbox/{later.pk}/correct",
        {"start": world.day(18), "end": world.day(25)},
        HTTP_ACCEPT_LANGUAGE="es",
        follow=True,
    )

    assert (
        f"Se solapa con la congelación del {world.day(10)} al {world.day(19)}, que "
        "espera la aprobación del personal."
    ) in page.content.decode()
    assert (
        ToolCallLog.objects.filter(
            expires_at__isnull=False, status="pending_approval"
        ).count()
        == 2
    )
