"""How calls read for people: a call's steps in the verification log for owners and
staff, in plain words that say what each check found, not the names the
dispatcher records ("not a repeat", where the record says ``duplicate`` with no
first call); a call's arguments in words, for staff. What a request is about, an
id named by what it names, and what a correction changed are ``tools.naming``'s."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import formats
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from gymnasia.nutrition.models import Meal
from tools.models import Handoff

#: The tools that change something, as staff and members read them: in plain
#: words, not function names.
TOOL_TITLES = {
    "add_food_to_meal": gettext_lazy("Add food to the meal diary"),
    "remove_meal_entry": gettext_lazy("Remove a meal diary entry"),
    "book_class": gettext_lazy("Book a class"),
    "cancel_booking": gettext_lazy("Cancel a class booking"),
    "freeze_membership": gettext_lazy("Freeze the membership"),
    "refund_payment": gettext_lazy("Refund a card payment"),
    "handoff_to_staff": gettext_lazy("Talk to a person"),
}


#: The tools that only read, as owners read them in admin.
READ_TOOL_TITLES = {
    "search_foods": gettext_lazy("Search the food catalogue"),
    "get_meal_diary": gettext_lazy("Read the meal diary"),
    "list_classes": gettext_lazy("List the classes"),
    "list_my_bookings": gettext_lazy("List the member's bookings"),
    "get_membership": gettext_lazy("Read the membership"),
    "list_payments": gettext_lazy("List the card payments"),
    "list_my_requests": gettext_lazy("List the member's requests"),
}


def tool_title(name: str) -> str:
    """A tool's title in the active language; a tool without one, by its name."""
    return str(TOOL_TITLES.get(name) or READ_TOOL_TITLES.get(name) or name)


def tool_titled(name: str) -> str:
    """A tool as owners read it in lists: its title, then its name for those
    who know tools by it ("Book a class (book_class)")."""
    title = tool_title(name)
    return title if title == name else f"{title} ({name})"


#: The arguments of the published tools, as a member reads them, in the order
#: people read a request: what it is about (the food, the class, the payment),
#: then when, then how much.
ARGUMENT_LABELS = {
    "food_id": gettext_lazy("food"),
    "session_id": gettext_lazy("class"),
    "booking_id": gettext_lazy("booking"),
    "entry_id": gettext_lazy("diary entry"),
    "payment_id": gettext_lazy("payment"),
    "start": gettext_lazy("start"),
    "end": gettext_lazy("end"),
    "date": gettext_lazy("date"),
    "date_from": gettext_lazy("from"),
    "date_to": gettext_lazy("to"),
    "query": gettext_lazy("search"),
    "meal": gettext_lazy("meal"),
    "grams": gettext_lazy("grams"),
    "amount": gettext_lazy("amount"),
    "reason": gettext_lazy("reason"),
}

#: Steps recorded after the call, by staff or by the sweep.
LATER_STEPS = {
    "approved": gettext_lazy("approved by staff"),
    "corrected by staff": gettext_lazy("corrected by staff"),
    "settled by staff": gettext_lazy("settled by staff"),
}


#: The statuses of a call's result (``tools.types``), as staff read them.
STATUS_LABELS = {
    "ok": gettext_lazy("done"),
    "no_results": gettext_lazy("nothing matched"),
    "not_found": gettext_lazy("not found"),
    "invalid_arguments": gettext_lazy("invalid arguments"),
    "unknown_tool": gettext_lazy("unknown tool"),
    "unavailable": gettext_lazy("service unavailable"),
    "failed": gettext_lazy("failed"),
    "unknown_outcome": gettext_lazy("outcome unknown"),
    "duplicate": gettext_lazy("repeat of an earlier call"),
    "pending_approval": gettext_lazy("waiting for approval"),
    "approved": gettext_lazy("approved, about to run"),
    "rejected": gettext_lazy("rejected"),
    "expired": gettext_lazy("expired"),
    "superseded": gettext_lazy("corrected into a new request"),
    "executing": gettext_lazy("running"),
}

#: How calls ended, as the owners' Panel counts them: each outcome the
#: statuses it gathers. A call still waiting, approved but not yet run, or
#: decided by staff is none of them (the Panel counts requests on their own).
CALL_OUTCOMES: dict[str, tuple[str, ...]] = {
    "succeeded": ("ok", "no_results"),
    "failed": ("failed", "unavailable", "not_found"),
    "unknown": ("unknown_outcome",),
    "refused": ("unknown_tool", "invalid_arguments"),
    "duplicate": ("duplicate",),
}
OUTCOME_LABELS = {
    "succeeded": gettext_lazy("succeeded"),
    "failed": gettext_lazy("failed"),
    "unknown": gettext_lazy("outcome unknown"),
    "refused": gettext_lazy("refused"),
    "duplicate": gettext_lazy("duplicate"),
}


#: The ``verification`` of a write's result, as staff read it.
VERIFICATION_LABELS = {
    "verified": gettext_lazy("verified"),
    "not_applied": gettext_lazy("not applied"),
    "unverifiable": gettext_lazy("could not be checked"),
}

#: Why an attempt or a check did not go through: the words the harness records
#: (``tools.execution``) and the integrations' errors, by name.
ERROR_LABELS = {
    "refused": gettext_lazy("the gym's rules do not allow it"),
    "not_found": gettext_lazy("not found"),
    "unavailable": gettext_lazy("service unavailable"),
    "IntegrationUnavailable": gettext_lazy("service unavailable"),
    "NotDelivered": gettext_lazy("it did not reach the service"),
    "OutcomeUnknown": gettext_lazy("no answer"),
    "IntegrationFailed": gettext_lazy("the service refused it"),
}


#: What happened to a call after it was proposed (``tools.calls`` records
#: them), where it is not a status of the call.
EVENT_LABELS = {
    "proposed": gettext_lazy("proposed by staff's correction"),
    "corrected": gettext_lazy("corrected by staff"),
    "late_result": gettext_lazy("an answer came after its time"),
}


def call_event_label(kind: str) -> str:
    """An event of a call's trail in words."""
    return str(EVENT_LABELS.get(kind) or call_status_label(kind))


def call_status_label(status: str) -> str:
    """A result's status in words; one this code does not know, as recorded."""
    return str(STATUS_LABELS.get(status, status))


def verification_label(verification: str) -> str:
    """A write's verification in words; one this code does not know, as recorded."""
    return str(VERIFICATION_LABELS.get(verification, verification))


def error_label(error: str) -> str:
    """Why an attempt did not go through, in words; any other error is a fault
    of the program, named by its exception."""
    if error in ERROR_LABELS:
        return str(ERROR_LABELS[error])
    return _("a fault in the program: %(error)s") % {"error": error}


@dataclass(frozen=True)
class CallOutcome:
    """How a call ended, as recorded and in words ("—" for no verification)."""

    status: str
    status_label: str
    verification: str
    verification_label: str


def call_outcome_described(*, status: str, verification: str) -> CallOutcome:
    return CallOutcome(
        status=status,
        status_label=call_status_label(status),
        verification=verification,
        verification_label=verification_label(verification) if verification else "—",
    )


def argument_label(name: str) -> str:
    """An argument's name in words, in the active language."""
    return str(ARGUMENT_LABELS.get(name, name))


def argument_value_described(name: str, value: Any) -> Any:
    """An argument's value as staff read it: a meal in words ("Cena", not
    "dinner"); any other value as given."""
    if name == "meal" and value in Meal.values:
        return str(Meal(value).label)
    return value


def call_step_described(step: Mapping[str, Any]) -> str:
    """One step of a call's verification log, in words."""
    name = step.get("step")
    if name == "offered":
        return _("offered") if step.get("offered") else _("not offered")
    if name == "validated":
        return _("arguments valid") if step.get("valid") else _("arguments invalid")
    if name == "limit":
        return _("over the gym's limit")
    if name == "duplicate":
        return _("repeats an earlier call") if step.get("first") else _("not a repeat")
    if name == "checked":
        if "error" in step:
            return _("checked before approval: cannot be done (%(error)s)") % {
                "error": error_label(str(step["error"]))
            }
        return _("checked before approval: can be done")
    if name == "gated":
        return _("waits for approval")
    if name == "attempt":
        if "error" in step:
            return _("attempt %(number)s failed (%(error)s)") % {
                "number": step.get("number"),
                "error": error_label(str(step["error"])),
            }
        return _("ran (%(status)s)") % {
            "status": call_status_label(str(step.get("status")))
        }
    if name == "verified":
        return _("looked again: %(verification)s") % {
            "verification": verification_label(str(step.get("verification")))
        }
    if name == "handoff":
        return _("handed to staff")
    return str(LATER_STEPS.get(str(name), name))


def duration_written(ms: float) -> str:
    """A time a call took, in the reader's notation: «0,25 ms», "8.5 ms",
    "85 ms", «1,5 s»."""
    if ms >= 1000:
        return f"{formats.number_format(ms / 1000, decimal_pos=1)} s"
    places = 2 if ms < 1 else 1 if ms < 10 else 0
    return f"{formats.number_format(ms, decimal_pos=places)} ms"


def call_steps_described(steps: Any, *, times: bool = False) -> list[str]:
    """A call's steps in words; with ``times``, each one's time since the call
    arrived, in the reader's notation, where it has one (steps recorded later
    have none)."""
    described = []
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict) and "step" in step:
            words = call_step_described(step)
            if times and isinstance(step.get("ms"), int | float):
                words = f"{words} ({duration_written(step['ms'])})"
            described.append(words)
    return described


@dataclass(frozen=True)
class HandoffDescribed:
    """A case for staff in words: what it is about, and what is known."""

    title: str
    known: str


#: What is known of a case, by its cause (the member's asking has its own words).
KNOWN = {
    Handoff.Cause.MEMBER_ASKED: gettext_lazy("The member asked for a person."),
    Handoff.Cause.NO_ANSWER: gettext_lazy(
        "The request was sent and no answer came back; it may have been done."
    ),
    Handoff.Cause.NOT_CONFIRMED: gettext_lazy(
        "The integration answered that it was done, but looking again could not "
        "confirm it."
    ),
    Handoff.Cause.WORKER_STOPPED: gettext_lazy(
        "The approved action started and its worker stopped before recording the "
        "outcome; it may or may not have been done."
    ),
    Handoff.Cause.TURN_STOPPED: gettext_lazy(
        "The assistant's turn stopped while this change was being made and never "
        "recorded its outcome; it may or may not have been done."
    ),
    Handoff.Cause.BUDGET_USED_UP: gettext_lazy(
        "The assistant's budget for this month is used up, so the member's message "
        "came to the staff; the assistant did not read it."
    ),
    Handoff.Cause.WHATSAPP_AMBIGUOUS: gettext_lazy(
        "The number is on more than one member's record, so the assistant "
        "answered it as an anonymous visitor. Keep it on one member only."
    ),
    Handoff.Cause.WHATSAPP_UNREACHED: gettext_lazy(
        "A message for the member could not be sent on WhatsApp; it waits in "
        "the conversation."
    ),
}
#: Cases whose recorded ``known`` says more than their cause (WhatsApp's own
#: refusal, in words).
TOLD_AS_RECORDED = (Handoff.Cause.WHATSAPP_UNREACHED,)


def handoff_described(handoff: Handoff) -> HandoffDescribed:
    """A case in the active language: a member's request for a person in their
    own words, a write's case by its tool's title; what is known, by its cause.
    A case without a cause (words the harness never wrote) reads as recorded."""
    cause, tool = handoff.cause, str(handoff.tried.get("tool") or "")
    if not cause:
        return HandoffDescribed(title=handoff.reason, known=handoff.known)
    if cause in (Handoff.Cause.MEMBER_ASKED, Handoff.Cause.BUDGET_USED_UP) or not tool:
        title = handoff.reason or handoff.get_cause_display()
    elif cause == Handoff.Cause.WORKER_STOPPED:
        title = _("Could not confirm the approved request: %(title)s.") % {
            "title": tool_title(tool)
        }
    else:
        title = _("Could not confirm: %(title)s.") % {"title": tool_title(tool)}
    if cause == Handoff.Cause.HANDLER_FAILED:
        known = _(
            "The program stopped with a fault (%(error)s) while making the change; "
            "it may have done it."
        ) % {"error": handoff.tried.get("error", "")}
    elif cause in TOLD_AS_RECORDED and handoff.known:
        known = handoff.known
    else:
        known = str(KNOWN[Handoff.Cause(cause)])
    return HandoffDescribed(title=title, known=known)
