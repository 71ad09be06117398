"""Decisions at their edges: a correction is bounded as the member's request was,
is refused once the request's time is up, and the inbox's forms and cases keep
what they show usable."""

from __future__ import annotations

import datetime
from dataclasses import replace
from decimal import Decimal

import pytest
import time_machine
from asgiref.sync import async_to_sync
from django.test import Client
from django.utils import timezone

from agents.models import Conversation
from agents.turn import turn_run
from approvals.services import (
    pending_action_approve,
    pending_action_correct,
    pending_action_execute,
)
from gymnasia.errors import Conflict, InvalidValue
from tests.approvals import test_member_told, test_pending_actions
from tests.approvals.test_pending_actions import request_freeze
from tests.faults import Fault, inject_fault
from tests.tools import conftest as tools_fixtures
from tools.dispatcher import dispatch_tool_call
from tools.models import Handoff, ToolCallLog
from tools.selection import ToolPolicy
from tools.types import ToolCall

pytestmark = pytest.mark.django_db

# The fixtures of those modules, by their names.
asked = test_member_told.asked
staff, sent = test_pending_actions.staff, test_pending_actions.sent
stripe = tools_fixtures.stripe


def test_a_correction_above_the_owners_maximum_is_refused(
    world, staff, stripe, sent, row_counts
):
    """The maximum was checked only as the member asked: staff could correct a
    refund of 10 to 40 where the owner allows 20, and 40 was refunded."""
    world.connect_stripe(stripe)
    policy = ToolPolicy(mode="gated", max_amount=Decimal("20"))
    context = replace(world.context(), offered={"refund_payment": policy})
    payment = world.ids["payment_id:monthly_fee"]
    result = dispatch_tool_call(
        ToolCall(
            id="c1",
            name="refund_payment",
            arguments={"payment_id": payment, "amount": 10},
        ),
        context,
    )
    action = ToolCallLog.objects.get(pk=result.payload["pending_action"])
    assert action.max_amount == Decimal("20")
    before = row_counts()

    with pytest.raises(
        InvalidValue, match=r"supera el límite de este gimnasio, 20\.00"
    ):
        pending_action_correct(
            action_id=action.pk,
            user=staff,
            arguments={"payment_id": payment, "amount": 40},
        )

    assert row_counts() == before
    corrected = pending_action_correct(
        action_id=action.pk, user=staff, arguments={"payment_id": payment, "amount": 20}
    )
    assert corrected.max_amount == Decimal("20")


def test_a_correction_of_a_request_whose_time_is_up_is_refused(
    world, staff, row_counts
):
    """Approving and rejecting refused it, correcting did not: the member was told
    staff would decide on a corrected request that was born expired."""
    action = request_freeze(world, 10, 19)
    with time_machine.travel(timezone.now() + datetime.timedelta(hours=25)):
        with pytest.raises(Conflict, match="Caducada"):
            pending_action_correct(
                action_id=action.pk,
                user=staff,
                arguments={"start": world.day(12), "end": world.day(19)},
            )
    action.refresh_from_db()
    assert action.status == "expired"
    assert ToolCallLog.objects.filter(expires_at__isnull=False).count() == 1


@pytest.mark.parametrize("bad", ["not-a-uuid", "1", ""])
def test_approving_the_selected_skips_an_id_no_request_can_have(
    staff, world, sent, bad
):
    """A crafted id was a server error, after the requests before it were
    approved."""
    mine = request_freeze(world, 10, 12)
    client = Client(raise_request_exception=False)
    client.force_login(staff)

    response = client.post("/inbox/approve-selected", {"ids": [str(mine.pk), bad]})

    mine.refresh_from_db()
    assert (response.status_code, mine.status) == (302, "approved")


def test_the_correction_form_gives_a_decimal_as_a_number_input_takes_it(
    world, staff, settings
):
    """In Spanish it said 40,5, which a browser's number input clears: the
    correction then lost its grams."""
    settings.LANGUAGE_CODE = "es"
    world.call(
        "add_food_to_meal",
        {
            "date": world.day(0),
            "meal": "dinner",
            "food_id": world.ids["food_id:oats"],
            "grams": 40.5,
        },
        offered={"add_food_to_meal": "gated"},
    )
    client = Client()
    client.force_login(staff)

    page = client.get("/inbox/", headers={"Accept-Language": "es"}).content.decode()

    assert 'name="grams" value="40.5"' in page
    assert "40,5" in page  # as read, in Spanish


def test_the_case_of_an_approved_request_whose_outcome_is_unknown_shows_its_turn(
    asked, client
):
    """The execution's log row named no step, so the case showed the
    conversation's last messages instead of the turn that asked."""
    action, staff, _ = asked
    pending_action_approve(action_id=action.pk, user=staff)
    with inject_fault("memberships", Fault.TIMEOUT_AFTER_COMMIT):
        assert pending_action_execute(action_id=action.pk) == "unknown"
    conversation = Conversation.objects.get(pk=action.conversation_key)
    for text in ("¿Qué clases hay mañana?", "¿Cuándo vence mi cuota?", "hola"):
        async_to_sync(turn_run)(conversation, text)
    handoff = Handoff.objects.get()
    client.force_login(staff)

    page = client.get("/inbox/handoffs/").content.decode()

    case = page.split(f'id="handoff-{handoff.pk}"')[1].split("</tr>")[0]
    assert "Congela mi cuota en agosto" in case
    assert handoff.tool_call == action  # the call itself
    assert handoff.tool_call.message_key == action.message_key != ""
