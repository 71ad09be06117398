"""What became of a request that waited for staff reaches the member's conversation:
done only when verified, and rejection, expiry and failure each in their own words."""

from __future__ import annotations

import datetime
import time
from io import StringIO

import jwt
import pytest
import time_machine
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.utils import timezone, translation

from agents.models import Agent, Conversation, Message
from agents.turn import turn_run
from agents.verdict import SENTENCES
from approvals.services import (
    pending_action_approve,
    pending_action_execute,
    pending_action_reject,
    pending_actions_expire,
)
from gymnasia.memberships.models import MembershipFreeze
from gymnasia.when import when_written
from tests.agents.offline_kit import between
from tests.approvals.inbox_kit import spanish_date
from tests.factories import StaffRoleFactory
from tests.faults import Fault, inject_fault
from tools.models import Handoff, ToolCallLog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]


@pytest.fixture
def asked(client):
    """A member asked, through the API, to freeze the membership (gated in the demo)."""
    call_command("seed_demo", stdout=StringIO())
    agent = Agent.objects.get()
    token = jwt.encode(
        {"sub": "socio-1001", "aud": agent.public_key, "exp": int(time.time()) + 600},
        agent.identity_secret,
        algorithm="HS256",
    )
    started = client.post(
        "/api/v1/conversations",
        {"agent": agent.public_key, "identity_token": token},
        content_type="application/json",
    ).json()
    headers = {"Authorization": f"Bearer {started['token']}"}
    url = f"/api/v1/conversations/{started['conversation']}/messages"
    reply = client.post(
        url,
        {"text": "Congela mi cuota en agosto"},
        content_type="application/json",
        headers=headers,
    ).json()["messages"]
    assert reply[-1]["text"].startswith(SENTENCES["es"]["waits"])
    staff = StaffRoleFactory(business=agent.business, role="staff").user

    def later() -> list[dict]:
        response = client.get(url, {"after": reply[-1]["id"]}, headers=headers)
        return response.json()["messages"]

    return ToolCallLog.objects.get(expires_at__isnull=False), staff, later


def test_an_approved_and_verified_request_is_told_done(asked):
    action, staff, later = asked
    pending_action_approve(action_id=action.pk, user=staff)
    pending_action_execute(action_id=action.pk)
    [message] = later()
    freeze = MembershipFreeze.objects.get()
    assert message["role"] == "assistant"
    assert message["text"] == (f"Cuota congelada {between(freeze.start, freeze.end)}.")


def test_an_approved_request_is_told_in_fixed_words_once_the_budget_is_used_up(
    asked,
):
    """With the agent's budget used up the model is not asked to write it up:
    the member reads the staff reviewed it, and no case is opened for staff
    (the member did not write)."""
    action, staff, later = asked
    agent = Agent.objects.get()
    agent.monthly_token_budget = 10
    agent.save()
    Message.objects.create(
        conversation=Conversation.objects.get(),
        role="step",  # a step of this month's that used the budget up
        model="gpt-5-mini",
        input_tokens=10,
        cached_input_tokens=0,
        cache_write_tokens=0,
        output_tokens=0,
    )
    pending_action_approve(action_id=action.pk, user=staff)
    pending_action_execute(action_id=action.pk)
    [message] = later()
    assert message["role"] == "notice"
    assert message["text"].startswith("El equipo ha revisado tu solicitud (")
    assert MembershipFreeze.objects.count() == 1  # done all the same
    assert not Handoff.objects.exists()


@pytest.mark.parametrize(
    "meanwhile", [["gracias"], ["gracias", "¿qué clases hay hoy?"]]
)
def test_an_approved_request_is_told_done_after_she_wrote_meanwhile(
    asked, client, meanwhile
):
    """The demo model writes up the request staff reviewed, not an answer to what
    she wrote while it waited ("gracias" once had the reviewed freeze told as
    "¡De nada!", or as nothing it could look up)."""
    action, staff, later = asked
    conversation = Conversation.objects.get()
    for text in meanwhile:
        async_to_sync(turn_run)(
            Conversation.objects.select_related("agent", "business", "member").get(
                pk=conversation.pk
            ),
            text,
        )
    pending_action_approve(action_id=action.pk, user=staff)
    pending_action_execute(action_id=action.pk)
    message = later()[-1]
    freeze = MembershipFreeze.objects.get()
    assert message["role"] == "assistant"
    assert message["text"] == (f"Cuota congelada {between(freeze.start, freeze.end)}.")


def test_a_rejection_is_told_with_the_reason(asked):
    action, staff, later = asked
    pending_action_reject(action_id=action.pk, user=staff, reason="en agosto cerramos")
    [message] = later()
    assert message["role"] == "notice"
    assert "no ha aprobado" in message["text"]
    assert "en agosto cerramos" in message["text"]
    assert "No se ha cambiado nada" in message["text"]


def test_an_expiry_is_not_told_as_a_rejection(
    asked, django_capture_on_commit_callbacks
):
    _, _, later = asked
    with django_capture_on_commit_callbacks(execute=True):
        pending_actions_expire(now=timezone.now() + datetime.timedelta(days=2))
    [message] = later()
    assert message["role"] == "notice"
    assert "ha caducado" in message["text"]
    assert "no ha aprobado" not in message["text"]


def test_an_approved_request_that_failed_is_told_not_done(asked):
    action, staff, later = asked
    pending_action_approve(action_id=action.pk, user=staff)
    with inject_fault("memberships", Fault.STORAGE_FAILURE):
        pending_action_execute(action_id=action.pk)
    [message] = later()
    assert message["text"].startswith(SENTENCES["es"]["not_done"] + "\n\n")
    assert MembershipFreeze.objects.count() == 0


def test_an_approved_request_with_an_unknown_outcome_is_told_not_confirmed(asked):
    action, staff, later = asked
    pending_action_approve(action_id=action.pk, user=staff)
    with inject_fault("memberships", Fault.TIMEOUT_AFTER_COMMIT):
        pending_action_execute(action_id=action.pk)
    [message] = later()
    assert message["text"].startswith(SENTENCES["es"]["not_confirmed"] + "\n\n")


def test_nobody_is_told_done_before_verification(asked):
    action, staff, later = asked
    pending_action_approve(action_id=action.pk, user=staff)
    assert later() == []  # approved, not yet executed and verified
    with time_machine.travel(timezone.now() + datetime.timedelta(minutes=1)):
        assert later() == []


def test_a_correction_is_told_with_what_staff_changed(asked):
    from approvals.services import pending_action_correct

    action, staff, later = asked
    new_end = action.arguments["end"][:8] + "20"
    pending_action_correct(
        action_id=action.pk,
        user=staff,
        arguments={"start": action.arguments["start"], "end": new_end},
    )
    [message] = later()
    assert message["role"] == "notice"
    start, end = (action.arguments[key] for key in ("start", "end"))
    with translation.override("es"):
        dates = when_written(*map(datetime.date.fromisoformat, (start, end)))
    assert dates.startswith("del 1 al 31 de agosto")
    assert message["text"] == (
        f"El equipo del gimnasio ha corregido tu solicitud (Congelar la cuota {dates}): "
        f"fin: {spanish_date(end)} → {spanish_date(new_end)}. Decidirá "
        "sobre la corregida; todavía no se ha hecho nada."
    )


def test_the_inbox_shows_the_conversation_excerpt(asked, client):
    _, staff, _ = asked
    client.force_login(staff)
    page = client.get("/inbox/").content.decode()
    assert "Congela mi cuota en agosto" in page


def test_the_excerpt_and_the_status_are_in_the_staffs_language(asked, client):
    """Who said each line of the excerpt, and the request's status, in words of
    the language staff read the inbox in."""
    _, staff, _ = asked
    client.force_login(staff)

    spanish = client.get("/inbox/", headers={"Accept-Language": "es"}).content
    english = client.get("/inbox/", headers={"Accept-Language": "en"}).content

    assert "<small>Socio:</small> Congela mi cuota en agosto" in spanish.decode()
    assert "<small>Asistente:</small>" in spanish.decode()
    assert '<span class="status-label">Pendiente</span>' in spanish.decode()
    assert "<small>Member:</small> Congela mi cuota en agosto" in english.decode()
    assert '<span class="status-label">Pending</span>' in english.decode()


def test_the_excerpt_is_the_turn_that_asked_whatever_came_after(asked, client):
    """The member went on talking: staff still read the message that asked, and
    the verification log in words ("not a repeat", not "duplicate")."""
    action, staff, _ = asked
    conversation = Conversation.objects.get(pk=action.conversation_key)
    for text in ("¿Qué clases hay mañana?", "¿Cuándo vence mi cuota?", "hola"):
        async_to_sync(turn_run)(conversation, text)
    client.force_login(staff)

    page = client.get("/inbox/").content.decode()

    assert "Congela mi cuota en agosto" in page
    assert "¿Cuándo vence mi cuota?" not in page
    assert "no es una repetición" in page or "not a repeat" in page
    assert "→ duplicate →" not in page


def test_a_row_decided_in_place_keeps_its_excerpt(asked, client):
    action, staff, _ = asked
    client.force_login(staff)

    row = client.post(
        f"/inbox/{action.pk}/reject",
        {"reason": "Cerrado"},
        headers={"HX-Request": "true"},
    ).content.decode()

    assert 'data-status="rejected"' in row
    assert "Congela mi cuota en agosto" in row


def test_a_request_links_to_its_whole_conversation(asked, client):
    """From the inbox, staff open the conversation and its verification log, at
    the step that made the request."""
    action, staff, _ = asked
    step = action.message_key
    client.force_login(staff)

    page = client.get("/inbox/").content.decode()
    link = f"/admin/agents/conversation/{action.conversation_key}/change/"

    assert f'href="{link}?at={step}#message-{step}"' in page
    timeline = client.get(f"{link}?at={step}")
    assert timeline.status_code == 200
    html = timeline.content.decode()
    target = html.split(f'id="message-{step}"')[1].split('class="timeline-message')[0]
    assert f'<a href="/admin/tools/toolcalllog/{action.pk}/change/">' in target
    assert "agents/timeline.css" in html


def test_a_case_shows_the_turn_it_came_from_and_links_to_it(asked, client):
    """A case from a call shows that call's turn; a member's own request for a
    person, the conversation's last words."""
    action, staff, _ = asked
    conversation = Conversation.objects.get(pk=action.conversation_key)
    for text in ("¿Cuándo vence mi cuota?", "Quiero hablar con una persona"):
        async_to_sync(turn_run)(conversation, text)
    from_call = Handoff.objects.create(
        business=conversation.business,
        member=conversation.member,
        conversation_key=str(conversation.pk),
        tool_call=action,
        reason="Could not confirm freeze_membership.",
    )
    client.force_login(staff)

    page = client.get("/inbox/handoffs/").content.decode()

    person = Handoff.objects.exclude(pk=from_call.pk).get()
    case, asked_for_person = (
        page.split(f'id="handoff-{h.pk}"')[1].split("</tr>")[0]
        for h in (from_call, person)
    )
    assert "Congela mi cuota en agosto" in case
    assert "Quiero hablar con una persona" not in case
    assert "Quiero hablar con una persona" in asked_for_person  # its reason, too
    link = f'href="/admin/agents/conversation/{conversation.pk}/change/'
    step = action.message_key
    assert f'{link}?at={step}#message-{step}"' in case  # at the call's step
    assert f'{link}"' in asked_for_person  # no call: the conversation


def _case(*, reason: str) -> Handoff:
    """An open case of the demo conversation, with no call (as a member's own
    request for a person leaves it)."""
    conversation = Conversation.objects.get()
    return Handoff.objects.create(
        business=conversation.business,
        member=conversation.member,
        conversation_key=str(conversation.pk),
        reason=reason,
    )


def test_a_settled_handoff_is_told(asked, client):
    _, staff, later = asked
    handoff = _case(reason="Could not confirm freeze_membership.")
    client.force_login(staff)
    client.post(
        f"/inbox/handoffs/{handoff.pk}/resolve", {"resolution": "not_done", "note": ""}
    )
    [message] = later()
    assert message["role"] == "notice"
    assert "no se hizo" in message["text"]


def test_a_member_who_asked_for_a_person_is_answered_with_the_staffs_words(
    asked, client
):
    """A member's own request for a person has no "done" to tell: staff write
    an answer, and that answer reaches the member."""
    _, staff, later = asked
    handoff = _case(reason="Quiero hablar con una persona")
    client.force_login(staff)

    form = client.get("/inbox/handoffs/").content.decode()
    form = form.split(f'id="handoff-{handoff.pk}"')[1].split("</tr>")[0]
    assert '<input type="hidden" name="resolution" value="note">' in form
    # An answer of some lines, as long as the case may keep.
    assert '<textarea name="note" required maxlength="2000"' in form
    assert "<select" not in form
    client.post(
        f"/inbox/handoffs/{handoff.pk}/resolve",
        {"resolution": "note", "note": "Te llamamos mañana a las 10."},
    )

    [message] = later()
    assert message["role"] == "notice"
    assert message["text"].endswith("Te llamamos mañana a las 10.")
    handoff.refresh_from_db()
    assert (handoff.status, handoff.resolution) == ("resolved", "note")


def test_an_empty_answer_settles_nothing(asked, client, row_counts):
    _, staff, later = asked
    handoff = _case(reason="Quiero hablar con una persona")
    client.force_login(staff)
    before = row_counts()

    client.post(
        f"/inbox/handoffs/{handoff.pk}/resolve", {"resolution": "note", "note": "  "}
    )

    handoff.refresh_from_db()
    assert handoff.status == "open"
    assert later() == []
    assert row_counts() == before


@pytest.mark.parametrize(
    ("note", "told"),
    [
        # It was cut at 2,000 characters without a word, and the member read the
        # cut answer.
        ("x" * 2001, "The note is too long: at most 2000 characters."),
        # The database refused the NUL character: a server error.
        ("Te llamamos\x00 mañana.", "The text cannot contain NUL characters."),
    ],
    ids=["too long", "NUL character"],
)
def test_an_answer_refused_settles_nothing_and_says_why(
    asked, client, row_counts, settings, note, told
):
    settings.LANGUAGE_CODE = "en"
    _, staff, later = asked
    handoff = _case(reason="Quiero hablar con una persona")
    client.force_login(staff)
    before = row_counts()

    response = client.post(
        f"/inbox/handoffs/{handoff.pk}/resolve",
        {"resolution": "note", "note": note},
        follow=True,
    )

    assert told in response.content.decode()
    handoff.refresh_from_db()
    assert handoff.status == "open"
    assert later() == []
    assert row_counts() == before
