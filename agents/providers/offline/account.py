"""The member's account and the people behind the gym: her membership, how her
requests to staff stand, talking to a person; and what the demo model says to
a greeting, a thank-you, or anything it does not read."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from agents.providers.offline.core import (
    Reply,
    Rule,
    Turn,
    day_written,
    days_written,
    read_failed,
    said_any,
    when,
)

PERSON = r"persona|humano|alguien del equipo|recepcion|person|human|someone|staff"
REQUESTS = r"solicitud\w*|peticion\w*|requests?|aprobad\w*|approved"
MEMBERSHIP = r"cuota|membresia|abono|suscripcion|membership|subscription|plan"
THANKS = r"gracias|thanks|thank you"
#: What each tool family lets the demo model help with, by the tools that do it.
TOPICS = (
    ({"search_foods"}, gettext_noop("the nutrients of the gym's foods")),
    ({"get_meal_diary", "add_food_to_meal"}, gettext_noop("your meal diary")),
    ({"list_classes"}, gettext_noop("the classes")),
    ({"list_my_bookings", "book_class"}, gettext_noop("your bookings")),
    ({"get_membership", "freeze_membership"}, gettext_noop("your membership")),
    ({"list_my_requests"}, gettext_noop("your requests to the staff")),
)


def person(turn: Turn) -> Reply | None:
    """A person asked for: the case handed to staff, or how to reach the gym."""
    if (result := turn.result("handoff_to_staff")) is not None:
        if result.get("status") == "ok":
            return Reply(_("I have told the staff; they will answer you here."))
        return Reply(read_failed(result) + " " + turn.a_person())
    if "handoff_to_staff" not in turn.offered:
        return Reply(
            _("I cannot pass you to a member of staff from here.")
            + " "
            + turn.a_person()
        )
    return turn.call("person", "handoff_to_staff", {"reason": turn.text[:1000]})


def _state(state: str) -> str:
    return {
        "waiting_for_staff": _("waiting for the staff"),
        "approved": _("approved; being done"),
        "done": _("approved and done"),
        "failed": _("approved, but it could not be done"),
        "outcome_unknown": _("approved; the staff are checking whether it was done"),
        "rejected": _("rejected"),
        "expired": _("expired before the staff reviewed it"),
    }.get(state, state)


def _about(request: dict[str, Any]) -> str:
    """What a request is about, from its facts: "Freeze from … to …"."""
    facts, tool = request.get("facts") or {}, request.get("tool")
    session = facts.get("session") or (facts.get("booking") or {})
    try:
        if tool == "freeze_membership":
            return _("Freeze %(dates)s") % {
                "dates": days_written(facts.get("start"), facts.get("end"))
            }
        if tool in {"book_class", "cancel_booking"} and session:
            text = (
                _("Booking of %(class)s on %(when)s")
                if tool == "book_class"
                else _("Cancelling the booking of %(class)s on %(when)s")
            )
            return text % {
                "class": session["class"],
                "when": when(session["starts_at"]),
            }
        if tool == "refund_payment":
            return _("Refund of %(amount)s") % facts
    except (KeyError, TypeError):
        pass
    return _("A request to the staff")


def requests(turn: Turn) -> Reply | None:
    """How her requests to staff stand, each named by what it is about."""
    result = turn.result("list_my_requests")
    if result is None:
        return turn.call("requests", "list_my_requests", {})
    if result.get("status") == "no_results":
        return Reply(
            _(
                "You have no request waiting for the staff or decided in the last 7 days."
            )
        )
    if result.get("status") != "ok":
        return Reply(read_failed(result))
    lines = []
    for request in result["requests"]:
        line = f"- {_about(request)}: {_state(request.get('state', ''))}"
        if request.get("reason"):
            line += f" («{request['reason']}»)"
        lines.append(line)
    return Reply(_("Your requests:") + "\n" + "\n".join(lines))


def membership(turn: Turn) -> Reply | None:
    """Her membership: its plan, state and end, and its freezes."""
    result = turn.result("get_membership")
    if result is None:
        return turn.call("membership", "get_membership", {})
    if result.get("status") != "ok":
        if result.get("status") == "no_results":
            return Reply(_("You have no membership at this gym."))
        return Reply(read_failed(result))
    held = result["membership"]
    if held["ends_on"]:
        said = {
            "active": _("Your membership «%(plan)s» is active and ends on %(ends)s."),
            "frozen": _("Your membership «%(plan)s» is frozen and ends on %(ends)s."),
        }.get(held["status"], _("Your membership «%(plan)s» ends on %(ends)s."))
        text = said % {"plan": held["plan"], "ends": day_written(held["ends_on"])}
    else:  # month to month, until it is ended
        said = {
            "active": _("Your membership «%(plan)s» is active, with no end date."),
            "frozen": _("Your membership «%(plan)s» is frozen, with no end date."),
        }.get(held["status"], _("Your membership «%(plan)s» has no end date."))
        text = said % {"plan": held["plan"]}
    for freeze in held.get("freezes") or []:
        text += " " + _("Frozen %(dates)s.") % {
            "dates": days_written(freeze["start"], freeze["end"])
        }
    for freeze in held.get("freezes_waiting_for_approval") or []:
        text += " " + _("A freeze %(dates)s waits for the staff's approval.") % {
            "dates": days_written(freeze["start"], freeze["end"])
        }
    return Reply(text)


def small_talk(turn: Turn) -> Reply | None:
    """Thanks answered; anything else, what this conversation's tools allow."""
    if said_any(turn.said, THANKS):
        return Reply(_("You are welcome! Anything else?"))
    topics = [_(topic) for tools, topic in TOPICS if tools & set(turn.offered)]
    if not topics:
        return Reply(_("Right now I cannot look anything up at the gym."))
    listed = (
        ", ".join(topics[:-1]) + _(" and ") + topics[-1] if topics[1:] else topics[0]
    )
    text = _("I can help you with %(topics)s.") % {"topics": listed}
    if "handoff_to_staff" in turn.offered:
        text += " " + _("I can also pass you to a member of staff.")
    return Reply(text + " " + _("What do you need?"))


RULES = (
    Rule("person", person, applies=lambda s: said_any(s, PERSON)),
    Rule("requests", requests, applies=lambda s: said_any(s, REQUESTS)),
    Rule("membership", membership, applies=lambda s: said_any(s, MEMBERSHIP)),
)
LAST = Rule("small_talk", small_talk, applies=lambda s: True)
