"""The staff inbox: a gym's staff see and decide their own gym's requests only."""

from __future__ import annotations

import datetime
import re

import pytest
from django.test import Client
from django.utils import translation

from approvals.selectors import request_state
from gymnasia.when import when_written
from tests.approvals.inbox_kit import unknown_food_write
from tests.approvals.test_pending_actions import request_freeze
from tests.factories import BusinessFactory, StaffRoleFactory
from tests.tools.world import build_world
from tools.models import ToolCallLog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]


def test_the_inbox_lists_the_gyms_pending_requests(staff_client, world, settings):
    settings.LANGUAGE_CODE = "en"
    mine = request_freeze(world)
    other_world = build_world()
    theirs = request_freeze(other_world)
    page = staff_client.get("/inbox/").content.decode()
    assert f'id="action-{mine.pk}"' in page
    assert f'id="action-{theirs.pk}"' not in page
    assert "Freeze the membership" in page
    assert world.day(10) in page


def test_a_request_reads_as_a_sentence(staff_client, world, settings):
    """Staff read «Congelar la cuota del 10 al 19 de …», not the tool's
    arguments by name."""
    settings.LANGUAGE_CODE = "es"
    request_freeze(world)
    page = staff_client.get("/inbox/", headers={"Accept-Language": "es"}).content
    page = page.decode()
    start, end = (datetime.date.fromisoformat(world.day(n)) for n in (10, 19))
    with translation.override("es"):
        dates = when_written(start, end)
    assert f'<p class="request-said">Congelar la cuota {dates}</p>' in page
    assert dates.startswith(f"del {start.day} ")
    assert "<code>start</code>" not in page
    # The correction form too, with a date picker for a date, its label naming
    # the request for a screen reader.
    assert re.search(
        r'<label for="id_[-\w]+_start">Inicio<span class="visually-hidden">: '
        r"Congelar la cuota — [^<]+</span></label> <input type=\"date\" "
        f'name="start" value="{world.day(10)}"',
        page,
    )


def test_the_list_refreshes_itself_as_a_fragment(staff_client, world):
    request_freeze(world)
    fragment = staff_client.get(
        "/inbox/", headers={"HX-Request": "true"}
    ).content.decode()
    assert fragment.startswith('<table id="actions"')
    assert 'hx-trigger="every 5s"' in fragment
    assert "<html" not in fragment


def test_the_cases_list_also_waits_while_staff_are_deciding(staff_client, world):
    """The cases refresh as requests do, not while a note is being written: the
    page's script (``approvals/inbox.js``) holds back the refresh of the lists it
    knows by id while one is in use (the browser tests watch it do so)."""
    fragment = staff_client.get(
        "/inbox/handoffs/", headers={"HX-Request": "true"}
    ).content.decode()
    assert fragment.startswith('<table id="handoffs"')
    assert 'hx-trigger="every 5s"' in fragment
    page = staff_client.get("/inbox/handoffs/").content.decode()
    assert "approvals/inbox.js" in page


def test_approving_from_the_inbox_swaps_the_row(
    staff_client, world, no_broker, django_capture_on_commit_callbacks
):
    action = request_freeze(world)
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            f"/inbox/{action.pk}/approve", headers={"HX-Request": "true"}
        )
    assert response.status_code == 200
    assert 'data-status="approved"' in response.content.decode()
    assert no_broker == [str(action.pk)]


def test_rejecting_keeps_the_reason(staff_client, world):
    action = request_freeze(world)
    staff_client.post(f"/inbox/{action.pk}/reject", {"reason": "Cerrado en agosto"})
    action.refresh_from_db()
    assert (action.status, action.decision.reason) == (
        "rejected",
        "Cerrado en agosto",
    )


@pytest.mark.parametrize(
    ("reason", "told"),
    [
        # It was cut at 1,000 characters without a word, and the member read the
        # cut reason.
        ("x" * 1001, "The reason is too long: at most 1000 characters."),
        # The database refused the NUL character: a server error.
        ("Cerrado\x00 en agosto", "The text cannot contain NUL characters."),
    ],
    ids=["too long", "NUL character"],
)
def test_a_reason_refused_rejects_nothing_and_says_why(
    staff_client, world, row_counts, settings, reason, told
):
    settings.LANGUAGE_CODE = "en"
    action = request_freeze(world)
    before = row_counts()

    response = staff_client.post(
        f"/inbox/{action.pk}/reject",
        {"reason": reason},
        headers={"HX-Request": "true"},
    )

    assert response.headers["HX-Redirect"] == "/inbox/"
    action.refresh_from_db()
    assert request_state(action.status) == "pending"
    assert row_counts() == before
    assert told in staff_client.get("/inbox/").content.decode()


def test_a_reason_of_the_longest_length_is_kept_whole(staff_client, world):
    action = request_freeze(world)
    assert (
        'name="reason" maxlength="1000"' in staff_client.get("/inbox/").content.decode()
    )

    staff_client.post(f"/inbox/{action.pk}/reject", {"reason": "x" * 1000})

    action.refresh_from_db()
    assert (action.status, len(action.decision.reason)) == ("rejected", 1000)


def test_approve_selected(staff_client, world):
    first, second = request_freeze(world, 10, 12), request_freeze(world, 20, 22)
    staff_client.post("/inbox/approve-selected", {"ids": [first.pk, second.pk]})
    requests = ToolCallLog.objects.filter(expires_at__isnull=False)
    assert set(requests.values_list("status", flat=True)) == {"approved"}


def test_another_gyms_request_is_not_found(staff_client, row_counts):
    other = request_freeze(build_world())
    before = row_counts()
    response = staff_client.post(f"/inbox/{other.pk}/approve")
    assert response.status_code == 404
    assert row_counts() == before
    other.refresh_from_db()
    assert request_state(other.status) == "pending"


def test_people_without_a_gym_role_are_refused(client, world):
    request_freeze(world)
    outsider = StaffRoleFactory(business=BusinessFactory()).user
    outsider.gym_roles.all().delete()
    client.force_login(outsider)
    assert client.get("/inbox/").status_code == 403
    assert Client().get("/inbox/").status_code == 302  # to the sign-in page


def test_every_action_needs_the_csrf_token(world):
    action = request_freeze(world)
    client = Client(enforce_csrf_checks=True)
    client.force_login(StaffRoleFactory(business=world.business, role="staff").user)
    assert client.post(f"/inbox/{action.pk}/approve").status_code == 403
    action.refresh_from_db()
    assert request_state(action.status) == "pending"


def test_a_handoff_is_settled_with_what_happened(staff_client, world):
    handoff = unknown_food_write(world)
    page = staff_client.get(
        "/inbox/handoffs/", headers={"Accept-Language": "en"}
    ).content.decode()
    assert f'id="handoff-{handoff.pk}"' in page
    # what was tried, as the request would read
    assert "Log 40 g of Copos de avena for dinner on " in page
    staff_client.post(
        f"/inbox/handoffs/{handoff.pk}/resolve",
        {"resolution": "done", "note": "Lo vi en el diario"},
    )
    handoff.refresh_from_db()
    assert (handoff.status, handoff.resolution, handoff.resolved_by is not None) == (
        "resolved",
        "done",
        True,
    )
    assert handoff.tool_call.steps[-1]["step"] == "settled by staff"


@pytest.mark.parametrize(
    "page",
    [
        "/inbox/?tool=%00",
        "/inbox/?status=%00",
        "/inbox/handoffs/?status=%00",
        "/inbox/handoffs/?status=nonsense",
    ],
)
def test_a_filter_no_inbox_knows_shows_the_default_list(staff_client, world, page):
    """A NUL character in a filter reached the database, which refused it: a
    server error."""
    action = request_freeze(world)

    response = staff_client.get(page)

    assert response.status_code == 200
    if page.startswith("/inbox/?"):
        assert f"/inbox/{action.pk}/reject" in response.content.decode()


def test_a_case_of_a_member_without_a_name_names_the_member(staff_client, world):
    """A verified member whose gym's site sent no name is shown by their id at the
    gym, as in the approvals list; only a visitor is an anonymous visitor."""
    # given a member created from an identity token without a name, and then an
    # anonymous visitor, each asking for a person
    world.member.name = ""
    world.member.save(update_fields=["name"])
    world.call("handoff_to_staff", {"reason": "Quiero hablar con alguien"})
    world.call(
        "handoff_to_staff",
        {"reason": "Soy un visitante"},
        member=None,
        conversation="conversation-2",
    )

    # when staff open the cases
    response = staff_client.get("/inbox/handoffs/", headers={"Accept-Language": "en"})

    # then the member is named by their id, and the visitor is anonymous
    assert response.status_code == 200
    visitor, member = response.content.decode().split('id="handoff-')[1:]
    assert '<td data-label="Member">anonymous visitor</td>' in visitor
    assert f'<td data-label="Member">{world.member.external_id}</td>' in member
    assert "anonymous visitor" not in member


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/inbox/"), ("get", "/inbox/handoffs/"), ("post", "approve")],
    ids=["the list's refresh", "the cases' refresh", "an approval"],
)
def test_a_fragment_asked_once_signed_out_sends_the_page_to_sign_in(
    world, row_counts, method, path
):
    """Signed out meanwhile (in another tab, or the session ended), the page's
    next refresh or decision takes the whole page to the sign-in page and back to
    where staff were, deciding nothing. (The sign-in page was swapped into the
    list, or into the row, as if it were part of the inbox.)"""
    action = request_freeze(world)
    signed_out = Client()
    if path == "approve":
        path = f"/inbox/{action.pk}/approve"
    before = row_counts()

    response = getattr(signed_out, method)(
        path,
        headers={
            "HX-Request": "true",
            "HX-Current-URL": "http://testserver/inbox/?status=pending",
        },
    )

    assert response.status_code == 200
    assert response["HX-Redirect"] == "/admin/login/?next=/inbox/%3Fstatus%3Dpending"
    assert response.content == b""
    assert row_counts() == before
    action.refresh_from_db()
    assert request_state(action.status) == "pending"


def test_the_inbox_lists_a_request_whose_member_was_deleted(staff_client, world):
    """The owner may delete a member (who asked to be forgotten) while a request
    of theirs is in the inbox: the request loses its member, and the inbox still
    lists it. (Naming its member failed, and the whole inbox was a server error
    for every member of staff.)"""
    action = request_freeze(world)
    world.member.delete()

    response = staff_client.get("/inbox/", headers={"Accept-Language": "en"})

    assert response.status_code == 200
    row = response.content.decode().split(f'id="action-{action.pk}"', 1)[1]
    assert '<td data-label="Member">anonymous visitor</td>' in row.split("</tr>", 1)[0]
