"""Decision links in staff's mails: approve or reject a request from the mail.

A link is signed (Django's signing) and bound to one notice, so to one staff
member, one request and the exact arguments that were mailed; it works until the
request expires, and once. Opening it shows what will happen and changes nothing
(a mail scanner that fetches links decides nothing): only the POST from that
page decides, as that staff member, through the same decision service as the
inbox. Without a session it needs no sign-in, and it grants nothing else; a
browser signed in as someone else is refused, and so is a link whose addressee
may no longer decide (an account deactivated, a role removed): a link is worth
no more than its addressee's right to decide now. Every refusal is a page saying
why, and changes nothing.

As Django's password reset does, the token never stays in an address: the first
request keeps it in the session and redirects to a page named by a digest of it,
so neither an access log, a warning about a refused page, a browser's history
nor a ``Referer`` holds a working link; the pages are not cached and send no
path as referrer.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from approvals.models import StaffNotice
from approvals.presentation import request_described
from approvals.selectors import State, request_state
from approvals.services import (
    DECIDING_ROLES,
    REASON_MAX,
    pending_action_approve,
    pending_action_reject,
)
from gymnasia.errors import Conflict, InvalidValue, NotAllowed, NotFound
from gymnasia.text import text_checked_storable
from tools.models import ToolCallLog
from tools.presentation import tool_title
from tools.types import PENDING_APPROVAL

SALT = "approvals.decision-link"
ACTIONS = ("approve", "reject")
#: Where the session keeps the links opened in it, by their digest.
SESSION_KEY = "approvals.links"
#: The links one session keeps (the latest opened).
SESSION_LINKS = 20


def arguments_digest(arguments: Any) -> str:
    """A short fingerprint of a request's exact arguments."""
    canonical = json.dumps(arguments or {}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:24]


def decision_link(notice: StaffNotice, action: str) -> str:
    """The path of the link that takes ``action`` on the notice's request."""
    if action not in ACTIONS:
        raise ValueError(f"not a link's action: {action}")
    token = signing.dumps(
        {
            "n": str(notice.pk),
            "u": notice.role.user_id,
            "c": str(notice.call_id),
            "d": arguments_digest(notice.call.arguments if notice.call else None),
            "a": action,
        },
        salt=SALT,
        compress=True,
    )
    return reverse("approvals:link", args=[token])


class Refused(Exception):
    """A link that cannot decide, with the words its page says and its status."""

    def __init__(self, words: str, status: int) -> None:
        super().__init__(words)
        self.words, self.status = words, status


def _opened(request: HttpRequest, token: str) -> tuple[StaffNotice, ToolCallLog, str]:
    """The notice, request and action of a link that may still decide;
    ``Refused`` saying why not."""
    invalid = Refused(_("This link is not valid."), 404)
    try:
        claims = signing.loads(token, salt=SALT)
        notice = (
            StaffNotice.objects.select_related(
                "role__user", "role__business", "call__member", "call__business"
            )
            .filter(pk=claims["n"], call_id=claims["c"], role__user_id=claims["u"])
            .first()
        )
        action = claims["a"]
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise invalid from None
    if notice is None or action not in ACTIONS or notice.call is None:
        raise invalid
    if notice.call.business_id != notice.role.business_id:
        raise invalid
    addressee = notice.role.user
    if not addressee.is_active or notice.role.role not in DECIDING_ROLES:
        raise Refused(
            _(
                "This link was sent to an account that may no longer decide "
                "requests. Nothing was decided."
            ),
            403,
        )
    user = request.user
    if user.is_authenticated and user.pk != notice.role.user_id:
        raise Refused(
            _(
                "This link was sent to another person. Sign out to use it, or "
                "decide in your inbox."
            ),
            403,
        )
    call = notice.call
    if notice.used_at is not None:
        used = _("This link was already used.")
        if call.status != PENDING_APPROVAL:
            used = f"{used} {_already(call)}"
        raise Refused(used, 409)
    if call.status != PENDING_APPROVAL:
        raise Refused(_already(call), 409)
    if call.expires_at is not None and call.expires_at <= timezone.now():
        raise Refused(_("This request expired: nobody decided it in time."), 410)
    if arguments_digest(call.arguments) != claims["d"]:
        raise Refused(_("This request changed after the mail was sent."), 409)
    return notice, call, action


def _already(call: ToolCallLog) -> str:
    state = request_state(call.status)
    if state == State.SUPERSEDED:
        return _(
            "This request was corrected after the mail was sent: the new request "
            "is in the inbox."
        )
    if state == State.EXPIRED:
        return _("This request expired: nobody decided it in time.")
    return _("This request was already decided: %(status)s.") % {
        "status": State(state).label
    }


def _unlogged(response: HttpResponse) -> HttpResponse:
    """A link's response: not cached, and no address sent from it as referrer
    (its origin only: with ``no-referrer`` a browser sends the page's own form
    with ``Origin: null``, which the CSRF check rightly refuses)."""
    response["Referrer-Policy"] = "strict-origin"
    return response


@csrf_exempt  # changes nothing but the session; a refusal would log the token
@never_cache
@require_http_methods(["GET", "POST"])
def link(request: HttpRequest, token: str) -> HttpResponse:
    """The mail's address: keep the token in the session, and go to its page by
    an address without it, whatever the token is worth (a refusal is told
    there)."""
    key = hashlib.sha256(token.encode()).hexdigest()[:24]
    kept = dict(request.session.get(SESSION_KEY, {}))
    kept.pop(key, None)
    kept[key] = token
    request.session[SESSION_KEY] = dict(list(kept.items())[-SESSION_LINKS:])
    return _unlogged(redirect("approvals:link-page", key=key))


@never_cache
@require_http_methods(["GET", "POST"])
def link_page(request: HttpRequest, key: str) -> HttpResponse:
    """GET: what the link will do, and a button; POST from that page: decide."""
    token = request.session.get(SESSION_KEY, {}).get(key)
    try:
        if token is None:
            raise Refused(
                _("This link is not valid. Open it again from your mail."), 404
            )
        notice, call, action = _opened(request, token)
    except Refused as refused:
        return _unlogged(
            render(
                request,
                "approvals/link.html",
                {"refused": refused.words},
                status=refused.status,
            )
        )
    business = notice.role.business
    with translation.override(notice.role.reads), timezone.override(business.zone):
        return _unlogged(_confirm_or_decide(request, notice, call, action))


def _confirm_or_decide(
    request: HttpRequest, notice: StaffNotice, call: ToolCallLog, action: str
) -> HttpResponse:
    context: dict[str, Any] = {
        "notice": notice,
        "action": action,
        "call": call,
        "title": tool_title(call.tool_name),
        "request": request_described(call),
        "member": call.member,
        "reason_max": REASON_MAX,
        "business": notice.role.business,
    }
    if request.method == "GET":
        return render(request, "approvals/link.html", context)
    reason = request.POST.get("reason", "").strip()
    try:
        if len(reason) > REASON_MAX:
            raise InvalidValue(
                _("The reason is too long: at most %(count)s characters.")
                % {"count": REASON_MAX}
            )
        text_checked_storable(reason)
    except InvalidValue as problem:
        context["problem"] = str(problem)
        return render(request, "approvals/link.html", context, status=400)
    used = StaffNotice.objects.filter(pk=notice.pk, used_at__isnull=True).update(
        used_at=timezone.now()
    )
    if not used:
        return render(
            request,
            "approvals/link.html",
            {"refused": _("This link was already used.")},
            status=409,
        )
    decide = pending_action_approve if action == "approve" else pending_action_reject
    try:
        decide(action_id=call.pk, user=notice.role.user, reason=reason)
    except NotAllowed as refused:  # the right to decide went meanwhile
        StaffNotice.objects.filter(pk=notice.pk).update(used_at=None)
        return render(
            request, "approvals/link.html", {"refused": str(refused)}, status=403
        )
    except (Conflict, NotFound, InvalidValue) as problem:
        call.refresh_from_db()
        words = _already(call) if isinstance(problem, Conflict) else str(problem)
        return render(request, "approvals/link.html", {"refused": words}, status=409)
    call.refresh_from_db()
    context["done"] = True
    return render(request, "approvals/link.html", context)
