"""Staff's mails: what waits for them, wherever they are.

A person's notices (``approvals.events`` writes them) go out together: at most
one mail a minute, none in their quiet hours (they wait until the hours end), and
only of what still waits when the mail is written. A mail is plain text and HTML
in the person's language and the gym's time zone; each request in it carries its
decision links (``approvals.links``).
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import Max, Q
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.text import Truncator
from django.utils.translation import gettext as _

from approvals.events import CLAIM_LEASE
from approvals.links import decision_link
from approvals.models import StaffNotice
from approvals.presentation import request_described
from gymnasia.gyms.models import Member, StaffRole
from tools.models import Handoff
from tools.presentation import handoff_described, tool_title
from tools.types import PENDING_APPROVAL

logger = logging.getLogger(__name__)

#: At most one mail per person in this time; what arrives meanwhile waits for it.
MAIL_EVERY = datetime.timedelta(minutes=1)


def _still_waits(notice: StaffNotice) -> bool:
    if notice.call is not None:
        return notice.call.status == PENDING_APPROVAL
    return notice.handoff is not None and notice.handoff.status == Handoff.Status.OPEN


def notices_mail(*, role_id: int, now: datetime.datetime | None = None) -> float:
    """Send one person one mail of everything waiting for them, unless a mail
    went out less than a minute ago. Returns the seconds to wait before trying
    again (0 when there is nothing more to do now)."""
    now = now or timezone.now()
    role = (
        StaffRole.objects.select_related("user", "business").filter(pk=role_id).first()
    )
    if role is None:
        return 0
    unsent = StaffNotice.objects.filter(
        role_id=role_id, status=StaffNotice.Status.UNSENT
    )
    if not role.email_notifications or not role.user.email or not role.user.is_active:
        unsent.update(status=StaffNotice.Status.DROPPED)
        return 0
    if role.quiet_at(now):
        return 0  # the sweep mails them once the quiet hours are over
    with transaction.atomic():
        # One sender per person at a time: the row lock (PostgreSQL), or the
        # database's write lock taken when the transaction starts (SQLite).
        StaffRole.objects.select_for_update().filter(pk=role_id).first()
        last = (
            StaffNotice.objects.filter(role_id=role_id, claimed_at__isnull=False)
            .exclude(status=StaffNotice.Status.DROPPED)
            .aggregate(last=Max("claimed_at"))["last"]
        )
        if last is not None and now - last < MAIL_EVERY:
            return (MAIL_EVERY - (now - last)).total_seconds()
        free = (
            unsent.filter(
                Q(claimed_at__isnull=True) | Q(claimed_at__lte=now - CLAIM_LEASE)
            )
            .select_related(
                "call__member",
                "call__business",
                "handoff__member",
                "handoff__tool_call",
            )
            .order_by("created_at")
        )
        taken: list[StaffNotice] = []
        settled: list[Any] = []
        for notice in free:
            if _still_waits(notice):
                taken.append(notice)
            else:
                settled.append(notice.pk)
        StaffNotice.objects.filter(pk__in=settled).update(
            status=StaffNotice.Status.DROPPED
        )
        StaffNotice.objects.filter(pk__in=[n.pk for n in taken]).update(claimed_at=now)
    if not taken:
        return 0
    _send(role, taken)
    StaffNotice.objects.filter(pk__in=[n.pk for n in taken]).update(
        status=StaffNotice.Status.SENT, sent_at=timezone.now()
    )
    return 0


def _named(member: Member | None) -> str:
    return str(member) if member else ""  # its name, else its external id


#: The most of a member's words a mail's subject quotes.
SUBJECT_WORDS = 40


def _members_words(words: str) -> str:
    """A member's words in a subject: quoted as theirs, shortened, after the
    gym's own words, so that they never read as the gym's (or as anyone's
    instructions)."""
    shortened = Truncator(" ".join(words.split())).chars(SUBJECT_WORDS)
    return _("A member's request: «%(words)s»") % {"words": shortened}


def _item(notice: StaffNotice) -> dict[str, Any]:
    """What a mail says of one notice, in the person's language."""
    base = settings.SITE_URL.rstrip("/")
    if notice.call is not None:
        call = notice.call
        return {
            "kind": notice.kind,
            "kind_label": notice.get_kind_display(),
            "title": tool_title(call.tool_name),
            "member": _named(call.member),
            "details": [(request_described(call), "")],
            "expires_at": call.expires_at,
            "approve": base + decision_link(notice, "approve"),
            "reject": base + decision_link(notice, "reject"),
            "open": base + reverse("approvals:inbox"),
        }
    handoff = notice.handoff
    if handoff is None:  # a notice is of a request or of a case
        raise ValueError(f"notice {notice.pk} has no subject")
    described = handoff_described(handoff)
    return {
        "kind": notice.kind,
        "kind_label": notice.get_kind_display(),
        "title": described.title,
        "subject": _members_words(described.title)
        if handoff.reason and described.title == handoff.reason
        else described.title,
        "member": _named(handoff.member),
        "details": [(described.known, "")],
        "expires_at": None,
        "open": base + reverse("approvals:handoffs"),
    }


def _send(role: StaffRole, notices: list[StaffNotice]) -> None:
    """One mail (plain text and HTML) of ``notices``, in the person's language
    and the gym's time zone."""
    business = role.business
    with translation.override(role.reads), timezone.override(business.zone):
        items = [_item(notice) for notice in notices]
        context = {"business": business, "items": items, "user": role.user}
        subject = render_to_string("approvals/mail/subject.txt", context).strip()
        text = render_to_string("approvals/mail/notices.txt", context)
        html = render_to_string("approvals/mail/notices.html", context)
    mail = EmailMultiAlternatives(
        subject=" ".join(subject.split()), body=text, to=[role.user.email]
    )
    mail.attach_alternative(html, "text/html")
    mail.send()
    logger.info("Mailed %s notices to staff role %s.", len(notices), role.pk)
