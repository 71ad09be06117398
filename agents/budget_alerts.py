"""Owners hear by e-mail when an agent's month reaches 80 % of its budget, and
when it is used up: once each a month, in each owner's language, never in their
quiet hours (the mail waits), only to owners with e-mail notifications on."""

from __future__ import annotations

from decimal import Decimal
from functools import partial

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from agents.budget import WARN_AT, month_start
from agents.models import Agent, BudgetAlert
from gymnasia.gyms.models import StaffRole

#: How long a mail held by an owner's quiet hours waits before trying again.
QUIET_RETRY_SECONDS = 15 * 60


def budget_alerts_record(agent: Agent, share: Decimal) -> None:
    """Record the month's alerts that ``share`` reaches and were not yet; each
    new one is mailed once the transaction commits."""
    from agents.tasks import mail_budget_alert

    month = month_start(agent.business).date()
    for percent, reached in ((80, share >= WARN_AT), (100, share >= 1)):
        if not reached:
            continue
        try:
            with transaction.atomic():
                alert = BudgetAlert.objects.create(
                    agent=agent, month=month, percent=percent
                )
        except IntegrityError:
            continue  # recorded already this month
        owners = StaffRole.objects.filter(
            business_id=agent.business_id,
            role=StaffRole.Role.OWNER,
            email_notifications=True,
        ).values_list("pk", flat=True)
        for role_id in owners:
            transaction.on_commit(partial(mail_budget_alert.delay, alert.pk, role_id))


def budget_alert_mail(*, alert_id: int, role_id: int) -> float:
    """Mail one owner one alert. Returns the seconds to wait before trying
    again (their quiet hours), or 0 when done."""
    alert = BudgetAlert.objects.select_related("agent__business").filter(pk=alert_id)
    role = StaffRole.objects.select_related("user", "business").filter(pk=role_id)
    found, owner = alert.first(), role.first()
    if found is None or owner is None or not owner.user.email:
        return 0
    if owner.quiet_at(timezone.now()):
        return QUIET_RETRY_SECONDS
    agent = found.agent
    with translation.override(owner.reads):
        if found.percent >= 100:
            subject = gettext("%(agent)s has used up its budget for this month") % {
                "agent": agent
            }
            body = gettext(
                "The assistant %(agent)s has used up its budget for this month: it "
                "no longer asks its model, and members' messages go to the staff. "
                "Raise the budget to let it answer again at once:\n%(link)s"
            )
        else:
            subject = gettext("%(agent)s has used %(percent)s %% of its budget") % {
                "agent": agent,
                "percent": found.percent,
            }
            body = gettext(
                "The assistant %(agent)s has used %(percent)s %% of its budget for "
                "this month. At 100 %% it stops asking its model until next month "
                "or until the budget is raised:\n%(link)s"
            )
        link = settings.SITE_URL.rstrip("/") + reverse(
            "admin:agents_agent_change", args=[agent.pk]
        )
        body = body % {"agent": agent, "percent": found.percent, "link": link}
    send_mail(subject, body, None, [owner.user.email])
    return 0
