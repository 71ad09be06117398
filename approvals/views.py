"""The staff inbox: pending approvals and handoffs of the staff member's gyms.

Server-rendered pages with htmx: the list refreshes itself every few seconds, and
each decision swaps the decided row in place. One view serves the page and its
fragment (``request.htmx``). Another gym's action is a 404, as if it did not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from agents.conversations import conversation_excerpts
from agents.models import Message
from approvals.forms import CorrectionForm
from approvals.look import admin_look
from approvals.models import Decision
from approvals.presentation import (
    case_named,
    decision_reason_described,
    member_named,
    request_described,
)
from approvals.selectors import (
    State,
    handoffs_for_staff,
    pending_actions_count,
    pending_actions_for_staff,
    request_state,
    user_is_gym_staff,
)
from approvals.services import (
    REASON_MAX,
    handoff_settle,
    pending_action_approve,
    pending_action_correct,
    pending_action_for_staff,
    pending_action_reject,
)
from gymnasia.errors import Conflict, InvalidValue, NotAllowed, NotFound
from gymnasia.text import choice_labels
from tools.models import Handoff, ToolCallLog
from tools.presentation import (
    TOOL_TITLES,
    call_outcome_described,
    call_steps_described,
    handoff_described,
    tool_title,
)
from tools.sentences import case_tried_sentence
from tools.services import NOTE_MAX

INBOX_REFRESH_SECONDS = 5

#: What the inbox's title says it shows, for each status filter ("" is all).
HEADINGS = {
    State.PENDING: gettext_lazy("Requests waiting for approval"),
    State.APPROVED: gettext_lazy("Approved requests"),
    State.REJECTED: gettext_lazy("Rejected requests"),
    State.EXPIRED: gettext_lazy("Expired requests"),
    State.SUPERSEDED: gettext_lazy("Superseded requests"),
    State.EXECUTING: gettext_lazy("Requests being carried out"),
    State.SUCCEEDED: gettext_lazy("Requests carried out"),
    State.FAILED: gettext_lazy("Failed requests"),
    State.UNKNOWN: gettext_lazy("Requests with an unknown outcome"),
    "": gettext_lazy("All requests"),
}


def inbox_heading(*, status: str, tool: str) -> str:
    """The inbox's title for a filter: what it shows, and of which tool."""
    heading = str(HEADINGS[status])
    if tool:
        return _("%(requests)s: %(tool)s") % {
            "requests": heading,
            "tool": tool_title(tool),
        }
    return heading


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


View = Callable[..., HttpResponse]


def signed_in(view: View) -> View:
    """``login_required`` for the inbox's pages. A fragment htmx asks for once
    the person is signed out (in another tab, or the session ended) sends the
    whole page to the sign-in page, and back to where they were: redirected as
    usual, htmx would put the sign-in page inside the list or the row."""
    required = login_required(view, login_url="admin:login")

    @wraps(view)
    def guarded(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.htmx and not request.user.is_authenticated:
            back = request.htmx.current_url_abs_path or request.get_full_path()
            login = redirect_to_login(back, login_url=reverse("admin:login"))
            return HttpResponseClientRedirect(login.url)
        return required(request, *args, **kwargs)

    return guarded


def _staff(request: HttpRequest) -> User:
    """The signed-in user, who must work at a gym."""
    if not isinstance(request.user, User) or not user_is_gym_staff(request.user):
        raise PermissionDenied
    return request.user


class Excerpt(list[tuple[str, str]]):
    """An excerpt's lines (the role's label and the text of each message), and
    the channel of its conversation (``whatsapp`` is shown)."""

    channel = ""


def _excerpt(messages: list[Message], roles: dict[str, str]) -> Excerpt:
    excerpt = Excerpt((roles[m.role], m.text) for m in messages)
    excerpt.channel = messages[0].conversation.channel if messages else ""
    return excerpt


def _excerpts(requests: list[tuple[str, str]]) -> dict[tuple[str, str], Excerpt]:
    """Each request's excerpt (``conversation_excerpts``)."""
    roles = choice_labels(Message.Role)
    return {
        request: _excerpt(messages, roles)
        for request, messages in conversation_excerpts(requests=requests).items()
    }


def _rows(calls: list[ToolCallLog]) -> list[dict[str, Any]]:
    """What the inbox shows of each request (``calls``, read with their
    decisions)."""
    excerpts = _excerpts([(c.conversation_key, c.message_key) for c in calls])
    rows = []
    for call in calls:
        state = request_state(call.status)
        decision: Decision | None = getattr(call, "decision", None)
        ran = state in (State.SUCCEEDED, State.FAILED, State.UNKNOWN)
        member = member_named(call.member)
        rows.append(
            {
                "action": call,
                "member": member,
                # What each of its controls names ("Approve: <name>").
                "name": f"{tool_title(call.tool_name)} — {member}",
                "state": state,
                "status": State(state).label,
                "decided_by": decision.decided_by if decision else None,
                "reason": decision_reason_described(
                    status=state, reason=decision.reason
                )
                if decision
                else "",
                "title": tool_title(call.tool_name),
                "excerpt": excerpts[call.conversation_key, call.message_key],
                "steps": call_steps_described(call.steps),
                "execution": call_outcome_described(
                    status=call.status, verification=call.verification
                )
                if ran
                else None,
                "said": request_described(call),
                "form": CorrectionForm(call) if state == State.PENDING else None,
            }
        )
    return rows


@signed_in
@require_GET
def inbox(request: HtmxHttpRequest) -> HttpResponse:
    """Pending approvals, newest first, filtered by tool and status; the title
    carries how many wait (a refresh's ``<title>``, which htmx puts in the tab)."""
    user = _staff(request)
    status = request.GET.get("status", State.PENDING)
    tool = request.GET.get("tool", "")
    if status and status not in State.values:
        status = State.PENDING
    if tool not in TOOL_TITLES:
        tool = ""  # a filter no inbox knows (or a NUL character) filters nothing
    cursor = request.GET.get("cursor", "")
    page = pending_actions_for_staff(user=user, status=status, tool=tool, cursor=cursor)
    context = {
        "rows": _rows(page.rows),
        "older": page.older,
        "cursor": cursor,
        "status": status,
        "tool": tool,
        "statuses": State.choices,
        "tools": [(name, tool_title(name)) for name in TOOL_TITLES],
        "refresh_seconds": INBOX_REFRESH_SECONDS,
        "reason_max": REASON_MAX,
        "waiting": pending_actions_count(user=user),
        "heading": inbox_heading(status=status, tool=tool),
    }
    if request.htmx:
        return render(request, "approvals/_actions.html", context)
    return render(request, "approvals/inbox.html", {**admin_look(request), **context})


@signed_in
@require_POST
def decide(request: HtmxHttpRequest, action_id: str, decision: str) -> HttpResponse:
    """Approve or reject one request, once."""
    user = _staff(request)
    if decision not in ("approve", "reject"):
        raise Http404
    reason = request.POST.get("reason", "").strip()
    service = pending_action_approve if decision == "approve" else pending_action_reject
    lost: Conflict | None = None
    try:
        service(action_id=action_id, user=user, reason=reason)
    except NotFound:
        raise Http404 from None
    except (InvalidValue, NotAllowed) as problem:
        # Nothing was decided; the whole page says why.
        messages.warning(request, str(problem))
        if request.htmx:
            return HttpResponseClientRedirect(reverse("approvals:inbox"))
        return redirect("approvals:inbox")
    except Conflict as conflict:  # decided by someone else: the row says so
        lost = conflict
    if request.htmx:
        action = ToolCallLog.objects.select_related(
            "member", "business", "decision__decided_by"
        ).get(pk=action_id)
        [row] = _rows([action])
        context = {"row": row, "reason_max": REASON_MAX}
        if lost:
            context["lost"] = _race_lost(row, lost)
        # The header's count follows the decision (an out-of-band swap).
        context["inbox_waiting"] = pending_actions_count(user=user)
        return render(request, "approvals/_decided.html", context)
    if lost:
        messages.warning(request, str(lost))
    return redirect("approvals:inbox")


def _race_lost(row: dict[str, Any], conflict: Conflict) -> str:
    """What a request's row says, at once, when the decision just made lost a
    race: who decided first (the row's status says what), and that this one was
    not applied; a request whose time ran out says that instead."""
    if row["decided_by"]:
        return _("%(who)s decided first; your decision was not applied.") % {
            "who": row["decided_by"]
        }
    return _("%(why)s Your decision was not applied.") % {"why": conflict}


@signed_in
@require_POST
def correct(request: HtmxHttpRequest, action_id: str) -> HttpResponse:
    """Correct a request's arguments; the corrected one waits for approval."""
    user = _staff(request)
    try:
        action = pending_action_for_staff(action_id=action_id, user=user)
    except NotFound:
        raise Http404 from None
    form = CorrectionForm(action, request.POST)
    if not form.is_valid():  # nothing is changed; the page says why
        messages.warning(request, form.problems())
        return redirect("approvals:inbox")
    try:
        pending_action_correct(
            action_id=action.pk, user=user, arguments=form.arguments()
        )
    except (Conflict, InvalidValue, NotAllowed) as problem:
        messages.warning(request, str(problem))
    else:
        messages.success(request, _("The corrected request is waiting for approval."))
    return redirect("approvals:inbox")


@signed_in
@require_POST
def approve_selected(request: HtmxHttpRequest) -> HttpResponse:
    """Approve every selected request that is still pending."""
    user = _staff(request)
    approved = 0
    for action_id in request.POST.getlist("ids"):
        try:
            pending_action_approve(action_id=action_id, user=user)
            approved += 1
        except (NotFound, Conflict):
            continue
        except NotAllowed as refused:  # nothing more may be decided by this person
            messages.warning(request, str(refused))
            break
    messages.success(
        request,
        ngettext(
            "%(count)s request approved.", "%(count)s requests approved.", approved
        )
        % {"count": approved},
    )
    return redirect("approvals:inbox")


@signed_in
@require_GET
def handoffs(request: HtmxHttpRequest) -> HttpResponse:
    """Cases a person must settle: unknown outcomes and members asking for staff."""
    user = _staff(request)
    status = request.GET.get("status", Handoff.Status.OPEN)
    if status and status not in Handoff.Status.values:
        status = Handoff.Status.OPEN
    cursor = request.GET.get("cursor", "")
    page = handoffs_for_staff(user=user, status=status, cursor=cursor)
    cases = page.rows
    excerpts = _excerpts([_turn_of(h) for h in cases])
    context = {
        "rows": [
            {
                "handoff": h,
                "member": member_named(h.member),
                "name": f"{case_named(h)} — {member_named(h.member)}",
                "described": handoff_described(h),
                "excerpt": excerpts[_turn_of(h)],
                "step": _turn_of(h)[1],
                "said": case_tried_sentence(h),
                # A member who asked for a person is answered, not told "done".
                "asked": h.tool_call_id is None,
            }
            for h in cases
        ],
        "older": page.older,
        "cursor": cursor,
        "status": status,
        "resolutions": Handoff.Resolution.choices,
        "refresh_seconds": INBOX_REFRESH_SECONDS,
        "note_max": NOTE_MAX,
    }
    if request.htmx:
        return render(request, "approvals/_handoffs.html", context)
    return render(
        request, "approvals/handoffs.html", {**admin_look(request), **context}
    )


def _turn_of(handoff: Handoff) -> tuple[str, str]:
    """The conversation of a case and the step of its call; a member's own request
    for a person has no call, and its excerpt is the conversation's last words."""
    step = handoff.tool_call.message_key if handoff.tool_call else ""
    return handoff.conversation_key, step


@signed_in
@require_POST
def resolve(request: HtmxHttpRequest, handoff_id: str) -> HttpResponse:
    """Record what actually happened with a handed-off case."""
    user = _staff(request)
    try:
        handoff_settle(
            handoff_id=handoff_id,
            user=user,
            resolution=request.POST.get("resolution", ""),
            note=request.POST.get("note", "").strip(),
        )
    except NotFound:
        raise Http404 from None
    except (Conflict, InvalidValue, NotAllowed) as problem:
        messages.warning(request, str(problem))
    return redirect("approvals:handoffs")
