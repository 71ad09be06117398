"""A turn under its agent's monthly budget (``agents.budget``): the month's spend
read as the turn starts, each step added as it comes, and no provider asked once
the budget is used up. The member is then told so in fixed words, and a person
takes the message where the agent hands conversations to staff; otherwise the
member is told how to reach the gym."""

from __future__ import annotations

from django.utils.translation import gettext, override

from agents.assistant import HANDOFF_TOOL
from agents.budget import Budget, month_spend
from agents.budget_alerts import budget_alerts_record
from agents.conversations import message_json
from agents.database import db_call
from agents.models import Message
from agents.providers.base import StepDone
from agents.turn_rows import StepRows, TurnState, message_store
from agents.turn_stream import Emit
from tools.models import Handoff
from tools.services import handoff_create


def budget_read(state: TurnState) -> None:
    """The agent's budget and its month so far (two queries, none without one)."""
    agent = state.conversation.agent
    state.budget = Budget.of(agent)
    if state.budget is not None:
        state.spent = month_spend(agent, state.budget)
        budget_alerts_record(agent, state.budget.share(state.spent))


def budget_used_up(state: TurnState) -> bool:
    return state.budget is not None and state.budget.share(state.spent) >= 1


def step_counted(state: TurnState, step: StepDone) -> None:
    if state.budget is not None:
        state.spent += state.budget.step_spend(state.model, step.usage)


async def over_budget(state: TurnState, prefix: str, emit: Emit) -> None:
    """End the turn without the model, after any verdict that is due."""
    message = await db_call(_told, state, state.deferred_taken(), prefix)
    await emit("message", message_json(message))


def _told(state: TurnState, deferred: list[StepRows], prefix: str) -> Message:
    conversation = state.conversation
    if state.budget is not None:  # used up during this turn: the owners hear now
        budget_alerts_record(conversation.agent, state.budget.share(state.spent))
    with override(conversation.language):
        if not state.turn_key:  # staff decided a request: its outcome, in fixed words
            text = state.unanswered or gettext(
                "The assistant cannot answer this month any more; the gym's staff "
                "have seen your request."
            )
        elif HANDOFF_TOOL in state.selection.offered:
            text = _handed_over(state)
        else:
            contact = conversation.business.contact_details.strip()
            text = (
                gettext(
                    "The assistant has used up what it may use this month and cannot "
                    "answer until next month."
                )
                + " "
                + (
                    gettext("You can reach the gym here: %(contact)s")
                    % {"contact": contact}
                    if contact
                    else gettext("Please contact the gym directly.")
                )
            )
    return message_store(
        state,
        deferred,
        Message.Role.NOTICE,
        prefix + text,
        {"reason": "budget"},
        last=True,
    )


def _handed_over(state: TurnState) -> str:
    """The member's message goes to staff, once a case is open for the
    conversation: a second case would only repeat the first."""
    conversation = state.conversation
    key = str(conversation.pk)
    already = Handoff.objects.filter(
        business_id=conversation.business_id,
        conversation_key=key,
        status=Handoff.Status.OPEN,
    ).exists()
    if already:
        return gettext(
            "The assistant has used up what it may use this month. Your conversation "
            "is already with the gym's staff, who will answer you here."
        )
    handoff_create(
        business=conversation.business,
        member=conversation.member,
        conversation_key=key,
        cause=Handoff.Cause.BUDGET_USED_UP,
        reason=state.messages[0].text if state.messages else "",
    )
    return gettext(
        "The assistant has used up what it may use this month, so your message has "
        "gone to the gym's staff; a person will answer you here."
    )
