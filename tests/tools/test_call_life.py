"""A call's life driven at random: proposals, repeats, ``again``, decisions,
corrections, expiries, deliveries (late, twice), workers that die and leases that
pass; after every step the rules hold (R7, R8, R9 and the decisions' trail).

Each example is a gym of its own, so examples share the database without
sharing rows.
"""

from __future__ import annotations

import datetime
from collections import Counter
from dataclasses import replace

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from approvals.models import Decision
from approvals.selectors import request_state
from approvals.services import (
    pending_action_approve,
    pending_action_correct,
    pending_action_execute,
    pending_action_reject,
    pending_actions_expire,
    pending_actions_sweep,
)
from gymnasia.errors import Conflict, InvalidValue
from gymnasia.memberships.models import Membership, MembershipFreeze
from gymnasia.nutrition.models import MealEntry
from tests.factories import StaffRoleFactory
from tests.tools.world import build_world
from tools.calls import execution_lease
from tools.dispatcher import dispatch_tool_call
from tools.models import Handoff, ToolCallEvent, ToolCallLog
from tools.types import ToolCall

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

#: Freezes a member may ask for: far enough apart never to overlap.
PERIODS = [(10, 12), (20, 22), (30, 32), (40, 42)]
CONVERSATIONS = ["conversation-1", "conversation-2"]
DECISIONS = ("approved", "rejected", "expired", "superseded")


class CallLife(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.world = build_world()
        Membership.objects.filter(member=self.world.member).update(
            ends_on=timezone.localdate() + datetime.timedelta(days=900)
        )
        self.staff = StaffRoleFactory(business=self.world.business, role="staff").user
        self.calls = 0
        self.messages = 0

    # -- the member's side ---------------------------------------------------

    def _dispatch(self, name, arguments, context):
        """One proposed call; a duplicate answers with its first's result as it
        stands now (R7)."""
        self.calls += 1
        call_id = f"call-{self.calls}"
        result = dispatch_tool_call(ToolCall(call_id, name, arguments), context)
        if result.status == "duplicate":
            log = ToolCallLog.objects.get(
                business=self.world.business, provider_call_id=call_id
            )
            assert result.payload["first"] == log.duplicate_of.result
            assert log.duplicate_of.status != "duplicate"

    @rule(period=st.sampled_from(PERIODS), conversation=st.sampled_from(CONVERSATIONS))
    def ask_for_a_freeze(self, period, conversation):
        start, end = period
        self._dispatch(
            "freeze_membership",
            {"start": self.world.day(start), "end": self.world.day(end)},
            self.world.context(
                offered={"freeze_membership": "gated"}, conversation=conversation
            ),
        )

    @rule(
        grams=st.sampled_from([100, 150]),
        again=st.booleans(),
        new_message=st.booleans(),
    )
    def log_food(self, grams, again, new_message):
        if new_message:
            self.messages += 1
        arguments = {
            "date": self.world.day(0),
            "meal": "dinner",
            "food_id": self.world.ids["food_id:rice_white"],
            "grams": grams,
        }
        if again:
            arguments["again"] = True
        context = replace(self.world.context(), turn_key=f"message-{self.messages}")
        self._dispatch("add_food_to_meal", arguments, context)

    # -- the staff's side ----------------------------------------------------

    def _requests(self, *states):
        """The calls that waited for staff, in the inbox's words."""
        return [
            call
            for call in ToolCallLog.objects.filter(
                business=self.world.business, expires_at__isnull=False
            ).order_by("created_at", "pk")
            if request_state(call.status) in states
        ]

    @precondition(lambda self: self._requests("pending"))
    @rule(data=st.data(), approve=st.booleans())
    def decide(self, data, approve):
        action = data.draw(st.sampled_from(self._requests("pending")))
        decide = pending_action_approve if approve else pending_action_reject
        try:
            decide(action_id=action.pk, user=self.staff)
        except Conflict:
            pass

    @precondition(lambda self: self._requests("pending"))
    @rule(data=st.data(), period=st.sampled_from(PERIODS))
    def correct(self, data, period):
        action = data.draw(st.sampled_from(self._requests("pending")))
        start, end = period
        try:
            pending_action_correct(
                action_id=action.pk,
                user=self.staff,
                arguments={"start": self.world.day(start), "end": self.world.day(end)},
            )
        except (Conflict, InvalidValue):
            pass

    @precondition(lambda self: self._requests("pending"))
    @rule()
    def time_runs_out(self):
        latest = max(a.expires_at for a in self._requests("pending"))
        pending_actions_expire(now=latest)

    # -- the workers' side ---------------------------------------------------

    @precondition(lambda self: self._requests("approved", "executing", "succeeded"))
    @rule(data=st.data())
    def deliver(self, data):
        """A task's message, on time, late or twice."""
        action = data.draw(
            st.sampled_from(self._requests("approved", "executing", "succeeded"))
        )
        pending_action_execute(action_id=action.pk)

    @precondition(lambda self: self._requests("approved"))
    @rule(data=st.data())
    def worker_dies(self, data):
        """A delivery claims the call to run it, and its worker dies at once."""
        action = data.draw(st.sampled_from(self._requests("approved")))
        now = timezone.now()
        ToolCallLog.objects.filter(pk=action.pk, status="approved").update(
            status="executing", lease_until=now + execution_lease()
        )
        ToolCallEvent.objects.create(call_id=action.pk, kind="executing")

    @rule(lease_passed=st.booleans())
    def sweep(self, lease_passed):
        now = timezone.now()
        if lease_passed:
            now += execution_lease() + datetime.timedelta(seconds=1)
        pending_actions_sweep(now=now)

    # -- what always holds ---------------------------------------------------

    @invariant()
    def one_effect_per_action(self):
        freezes = Counter(
            MembershipFreeze.objects.filter(
                membership__member=self.world.member
            ).values_list("start", "end")
        )
        assert all(count == 1 for count in freezes.values())
        calls = ToolCallLog.objects.filter(
            business=self.world.business, tool_name="add_food_to_meal"
        )
        made = calls.exclude(status="duplicate")
        honoured = Counter(
            made.exclude(again_for="").values_list("action_key", "again_for")
        )
        assert all(count == 1 for count in honoured.values())
        for key in made.values_list("action_key", flat=True).distinct():
            agains = made.filter(action_key=key).exclude(again_for="").count()
            assert made.filter(action_key=key).count() <= 1 + agains
        entries = MealEntry.objects.filter(member=self.world.member, meal="dinner")
        assert entries.count() == made.filter(status="ok").count()

    @invariant()
    def success_only_when_verified(self):
        for call in ToolCallLog.objects.filter(
            business=self.world.business, effect="write", status="ok"
        ):
            assert call.verification == "verified"
        for action in self._requests("succeeded"):
            assert action.verification == "verified"
            assert action.status == "ok"

    @invariant()
    def every_unknown_has_one_handoff(self):
        for call in ToolCallLog.objects.filter(
            business=self.world.business, status="unknown_outcome"
        ):
            assert Handoff.objects.filter(tool_call=call).count() == 1
        assert not Handoff.objects.filter(
            business=self.world.business, tool_call__status="ok"
        ).exists()

    @invariant()
    def every_decision_once(self):
        for action in ToolCallLog.objects.filter(
            business=self.world.business, expires_at__isnull=False
        ):
            decisions = Decision.objects.filter(call=action)
            on_the_call = ToolCallEvent.objects.filter(call=action, kind__in=DECISIONS)
            if action.status == "pending_approval":
                assert decisions.count() == 0
                assert on_the_call.count() == 0
                continue
            assert decisions.count() == 1, action.status
            assert on_the_call.count() == 1, action.status
            # The decision, its event and the call's state say the same: a
            # call past its decision is the one approved (executing or ended).
            [decision] = decisions
            assert on_the_call.get().kind == decision.kind
            expected = (
                action.status
                if action.status in ("rejected", "expired", "superseded")
                else "approved"
            )
            assert decision.kind == expected, (decision.kind, action.status)
            assert (decision.kind == "superseded") == (
                decision.corrected_to_id is not None
            )


def test_a_calls_life_keeps_the_rules(monkeypatch):
    monkeypatch.setattr(
        "approvals.tasks.execute_approved_action.delay", lambda action_id: None
    )
    run_state_machine_as_test(
        CallLife,
        settings=settings(
            max_examples=25,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
