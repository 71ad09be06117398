"""Staff hear of what waits for them: each new request or case recorded once, a
mail per person at most each minute, in their language, never in their quiet
hours, reminders and escalations once. The task bodies are called directly here;
delivery through a real worker and SMTP server is in ``test_notices_delivery``."""

from __future__ import annotations

import datetime

import pytest
import time_machine
from django.utils import timezone

from approvals.events import escalation_due, events_announce, notices_due
from approvals.models import Event, StaffNotice
from approvals.notices import notices_mail
from approvals.services import (
    handoff_settle,
    pending_action_approve,
    pending_action_correct,
    pending_action_reject,
    pending_actions_expire,
    pending_actions_sweep,
)
from tests.approvals.inbox_kit import unknown_food_write
from tests.factories import BusinessFactory, StaffRoleFactory, UserFactory
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def request_freeze(world, start=10, end=19, conversation="conversation-1"):
    result = world.call(
        "freeze_membership",
        {"start": world.day(start), "end": world.day(end)},
        offered={"freeze_membership": "gated"},
        conversation=conversation,
    )
    assert result.status == "pending_approval"
    return ToolCallLog.objects.get(pk=result.payload["pending_action"])


def request_booking(world):
    result = world.call(
        "book_class",
        {"session_id": world.ids["session_id:spinning"]},
        offered={"book_class": "gated"},
    )
    assert result.status == "pending_approval"
    return ToolCallLog.objects.get(pk=result.payload["pending_action"])


def person(world, role="staff", email=True, **preferences):
    user = UserFactory(
        email=f"user{UserFactory._meta.model.objects.count()}@example.com"
        if email
        else ""
    )
    role_row = StaffRoleFactory(business=world.business, user=user, role=role)
    if preferences:
        for name, value in preferences.items():
            setattr(role_row, name, value)
        role_row.save()
    return role_row


@pytest.fixture
def mailed(monkeypatch):
    """The people a commit would have sent the mail task for."""
    roles: list[int] = []
    monkeypatch.setattr("approvals.tasks.mail_staff.delay", roles.append)
    return roles


@pytest.fixture
def staff(world):
    return person(world, "staff")


@pytest.fixture
def owner(world):
    return person(world, "owner", language="en")


def test_a_new_request_is_told_once_to_each_person_who_wants_it(
    world, staff, owner, mailed, django_capture_on_commit_callbacks
):
    quiet_one = person(world, notify_requests=False)
    no_address = person(world, email=False)
    outsider = StaffRoleFactory(
        business=BusinessFactory(), user=UserFactory(email="x@example.com")
    )
    call = request_freeze(world)

    with django_capture_on_commit_callbacks(execute=True):
        assert events_announce() == 1
    with django_capture_on_commit_callbacks(execute=True):
        assert events_announce() == 0

    event = Event.objects.get()
    assert (event.type, event.call_id) == ("approval.requested", call.pk)
    assert event.data["member"] == world.member.external_id
    notified = set(StaffNotice.objects.values_list("role_id", flat=True))
    assert notified == {staff.pk, owner.pk}
    assert {quiet_one.pk, no_address.pk, outsider.pk}.isdisjoint(notified)
    assert sorted(mailed) == sorted([staff.pk, owner.pk])


def test_the_mail_names_the_request_in_the_persons_language_with_its_links(
    world, staff, owner, mailoutbox, settings
):
    settings.SITE_URL = "https://gym.example"
    request_booking(world)
    events_announce()

    notices_mail(role_id=staff.pk)
    notices_mail(role_id=owner.pk)

    spanish, english = mailoutbox
    assert spanish.to == [staff.user.email] and english.to == [owner.user.email]
    assert "Reservar una clase" in spanish.subject
    assert "Book a class" in english.subject
    for mail in (spanish, english):
        text = mail.body
        html = mail.alternatives[0][0]
        assert "Spinning" in text and "Marta" in text and "Spinning" in html
        assert world.member.name in text
        assert text.count("https://gym.example/inbox/link/") == 2
        assert "https://gym.example/inbox/" in html
    assert "Caduca" in spanish.body and "Expires" in english.body
    assert StaffNotice.objects.filter(status="sent").count() == 2


def test_a_burst_is_grouped_into_at_most_one_mail_a_minute(world, staff, mailoutbox):
    first = request_freeze(world, 10, 12)
    events_announce()
    assert notices_mail(role_id=staff.pk) == 0
    for offset in range(5):
        request_freeze(world, 20 + offset * 3, 21 + offset * 3, f"c-{offset}")
    events_announce()

    wait = notices_mail(role_id=staff.pk)

    assert 0 < wait <= 60
    assert len(mailoutbox) == 1 and str(first.pk) not in mailoutbox[0].body
    with time_machine.travel(timezone.now() + datetime.timedelta(seconds=61)):
        assert notices_mail(role_id=staff.pk) == 0
    assert len(mailoutbox) == 2
    assert mailoutbox[1].body.count("/inbox/link/") == 10  # five requests, two links
    assert not StaffNotice.objects.filter(status=StaffNotice.Status.UNSENT).exists()


def test_quiet_hours_hold_the_mail_until_they_end(world, mailoutbox, mailed):
    night = person(world, quiet_from=datetime.time(22), quiet_until=datetime.time(7))
    today = timezone.localtime(timezone.now(), world.business.zone).date()
    at_night = datetime.datetime.combine(
        today, datetime.time(23, 30), tzinfo=world.business.zone
    )
    with time_machine.travel(at_night, tick=False):
        request_freeze(world)
        events_announce()
        assert notices_mail(role_id=night.pk) == 0
        assert notices_due(now=timezone.now()) == 1
    assert mailoutbox == []

    with time_machine.travel(at_night + datetime.timedelta(hours=8), tick=False):
        notices_mail(role_id=night.pk)
    assert len(mailoutbox) == 1


def test_a_request_decided_before_its_mail_is_not_mailed(
    world, staff, mailoutbox, no_broker
):
    call = request_freeze(world)
    events_announce()
    pending_action_reject(action_id=call.pk, user=person(world).user)

    notices_mail(role_id=staff.pk)

    assert mailoutbox == []
    assert StaffNotice.objects.get(role=staff).status == "dropped"


def test_a_new_handoff_is_told_with_what_is_known(world, staff, mailoutbox):
    unknown_food_write(world)
    events_announce()

    notices_mail(role_id=staff.pk)

    (mail,) = mailoutbox
    assert "Nuevo traspaso" in mail.subject
    assert "/inbox/handoffs/" in mail.body and "/inbox/link/" not in mail.body


def test_reminder_then_escalation_each_once(world, staff, owner, mailoutbox, no_broker):
    call = request_freeze(world)
    events_announce()
    notices_mail(role_id=staff.pk)
    notices_mail(role_id=owner.pk)
    start = call.created_at

    with time_machine.travel(start + datetime.timedelta(minutes=16)):
        first = pending_actions_sweep(now=timezone.now())
        again = pending_actions_sweep(now=timezone.now())
    with time_machine.travel(start + datetime.timedelta(minutes=61)):
        late = pending_actions_sweep(now=timezone.now())
        late_again = pending_actions_sweep(now=timezone.now())

    assert (first["reminded"], again["reminded"]) == (1, 0)
    assert (first["escalated"], late["escalated"], late_again["escalated"]) == (0, 1, 0)
    kinds = list(
        StaffNotice.objects.values_list("role_id", "kind").order_by("role_id", "kind")
    )
    assert sorted(kinds) == sorted(
        [
            (staff.pk, "request"),
            (staff.pk, "reminder"),
            (owner.pk, "request"),
            (owner.pk, "reminder"),
            (owner.pk, "escalation"),
        ]
    )


def test_escalation_comes_before_a_short_request_expires(world):
    call = request_freeze(world)
    call.expires_at = call.created_at + datetime.timedelta(minutes=40)
    world.business.escalation_minutes = 60

    due = escalation_due(call, world.business)

    assert due == call.created_at + datetime.timedelta(minutes=30)


def test_decisions_and_settled_cases_are_recorded_as_events(world, staff, no_broker):
    approved, rejected, corrected, expiring = (
        request_freeze(world, 10 + i * 5, 12 + i * 5, f"c-{i}") for i in range(4)
    )
    pending_action_approve(action_id=approved.pk, user=staff.user)
    pending_action_reject(action_id=rejected.pk, user=staff.user, reason="No")
    new = pending_action_correct(
        action_id=corrected.pk,
        user=staff.user,
        arguments={"start": world.day(30), "end": world.day(31)},
    )
    ToolCallLog.objects.filter(pk=expiring.pk).update(expires_at=timezone.now())
    pending_actions_expire(now=timezone.now())
    handoff = unknown_food_write(world)
    events_announce()
    handoff_settle(handoff_id=handoff.pk, user=staff.user, resolution="done")

    decided = {e.call_id: e.data for e in Event.objects.filter(type="approval.decided")}
    assert decided[approved.pk]["decision"] == "approved"
    assert decided[approved.pk]["decided_by"] == staff.user.username
    assert decided[rejected.pk]["reason"] == "No"
    assert decided[corrected.pk]["corrected_to"] == str(new.pk)
    assert decided[expiring.pk]["decision"] == "expired"
    opened = Event.objects.get(type="handoff.opened")
    resolved = Event.objects.get(type="handoff.resolved")
    assert opened.handoff_id == resolved.handoff_id == handoff.pk
    assert resolved.data["resolution"] == "done"
    requested = set(
        Event.objects.filter(type="approval.requested").values_list(
            "call_id", flat=True
        )
    )
    assert new.pk in requested  # the correction is a new request


def test_a_role_without_mail_drops_its_notices(world, staff, mailoutbox):
    request_freeze(world)
    events_announce()
    staff.email_notifications = False
    staff.save()

    notices_mail(role_id=staff.pk)

    assert mailoutbox == []
    assert StaffNotice.objects.get().status == "dropped"


def test_a_members_words_are_quoted_as_theirs_in_a_subject(world, staff, mailoutbox):
    """A member's words were a staff mail's whole subject, read as the gym's."""
    words = "URGENTE: su cuenta está suspendida, pague hoy en pagos-gym.example.com"
    world.call("handoff_to_staff", {"reason": words})
    events_announce()

    notices_mail(role_id=staff.pk)

    (mail,) = mailoutbox
    said = mail.subject.split("Solicitud de un socio: «", 1)
    assert mail.subject.startswith("Nuevo traspaso: Solicitud de un socio: «")
    assert said[1].startswith("URGENTE: su cuenta") and "»" in said[1]
    assert words not in mail.subject and "example.com" not in mail.subject
    assert words in mail.body  # the mail itself says it all, as the member's
