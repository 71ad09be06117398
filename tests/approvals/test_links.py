"""Decision links in staff's mails: opening one changes nothing; only the POST
from its page decides, as the person it was sent to, once; every other use is
refused with a page saying why, and changes nothing (rows counted)."""

from __future__ import annotations

import logging

import pytest
from django.core import signing
from django.test import Client
from django.utils import timezone

from approvals.events import events_announce
from approvals.links import SALT, arguments_digest, decision_link
from approvals.models import Decision, StaffNotice
from approvals.services import pending_action_correct
from gymnasia.logs import LinkTokensHidden
from tests.factories import StaffRoleFactory, UserFactory
from tests.tools.world import build_world
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


def request_freeze(world, start=10, end=19):
    result = world.call(
        "freeze_membership",
        {"start": world.day(start), "end": world.day(end)},
        offered={"freeze_membership": "gated"},
    )
    return ToolCallLog.objects.get(pk=result.payload["pending_action"])


def opened(client, link: str) -> str:
    """Where a mail's link leads: its token is kept in the session, and the
    address it redirects to does not hold it."""
    first = client.get(link)
    assert first.status_code == 302
    token = link.rsplit("/", 1)[1]
    assert token not in first.url
    return first.url


@pytest.fixture
def staff(world):
    return StaffRoleFactory(
        business=world.business, role="staff", user=UserFactory(email="ana@example.com")
    )


@pytest.fixture
def request_mailed(world, staff):
    """A request, its notice to ``staff``, and the two links of the mail."""
    call = request_freeze(world)
    events_announce()
    notice = StaffNotice.objects.get(role=staff, call=call)
    return (
        call,
        notice,
        decision_link(notice, "approve"),
        decision_link(notice, "reject"),
    )


def test_opening_a_link_shows_what_will_happen_and_changes_nothing(
    client, request_mailed, row_counts
):
    call, _, approve, _ = request_mailed
    before = row_counts()

    page = client.get(opened(client, approve))

    assert page.status_code == 200
    assert "Congelar la cuota" in page.text and "Aprobar" in page.text
    assert row_counts() == before
    call.refresh_from_db()
    assert call.status == "pending_approval"


def test_the_post_from_the_page_approves_as_the_person_mailed(
    client, request_mailed, staff, no_broker, django_capture_on_commit_callbacks
):
    call, notice, approve, _ = request_mailed

    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(opened(client, approve), {"reason": ""})

    assert page.status_code == 200 and "Aprobada" in page.text
    decision = Decision.objects.get(call=call)
    assert (decision.kind, decision.decided_by_id) == ("approved", staff.user_id)
    assert no_broker == [str(call.pk)]
    notice.refresh_from_db()
    assert notice.used_at is not None


def test_a_rejection_by_link_tells_the_member_the_reason(client, request_mailed):
    call, _, _, reject = request_mailed

    client.post(opened(client, reject), {"reason": "Ese mes está cerrado el gimnasio."})

    call.refresh_from_db()
    assert call.status == "rejected"
    assert call.decision.reason == "Ese mes está cerrado el gimnasio."


def test_a_second_use_is_refused_and_changes_nothing(
    client, request_mailed, row_counts, no_broker
):
    _, _, approve, reject = request_mailed
    client.post(opened(client, approve))
    before = row_counts()

    again = client.post(opened(client, approve))
    other = client.post(opened(client, reject), {"reason": "tarde"})

    assert again.status_code == 409 and "ya se usó" in again.text
    assert other.status_code == 409
    assert "ya se usó" in other.text and "ya estaba decidida" in other.text
    assert row_counts() == before


def test_an_expired_link_is_refused(client, request_mailed, row_counts):
    call, _, approve, _ = request_mailed
    ToolCallLog.objects.filter(pk=call.pk).update(expires_at=timezone.now())
    before = row_counts()

    page = client.post(opened(client, approve))

    assert page.status_code == 410 and "caducó" in page.text
    assert row_counts() == before


def test_a_link_opened_by_another_signed_in_person_is_refused(
    client, world, request_mailed, row_counts
):
    _, _, approve, _ = request_mailed
    client.force_login(StaffRoleFactory(business=world.business, role="staff").user)
    before = row_counts()

    page = client.post(opened(client, approve))

    assert page.status_code == 403 and "otra persona" in page.text
    assert row_counts() == before


def test_a_link_for_another_gyms_request_is_refused(client, world, staff, row_counts):
    """A token signed with the app's own key (as a bug might make one) that pairs
    this person's notice with another gym's request decides nothing."""
    own = request_freeze(world)
    other_world = build_world()
    foreign = request_freeze(other_world)
    events_announce()
    notice = StaffNotice.objects.get(role=staff, call=own)
    forged = signing.dumps(
        {
            "n": str(notice.pk),
            "u": staff.user_id,
            "c": str(foreign.pk),
            "d": arguments_digest(foreign.arguments),
            "a": "approve",
        },
        salt=SALT,
        compress=True,
    )
    before = row_counts()

    page = client.post(opened(client, f"/inbox/link/{forged}"))

    assert page.status_code == 404
    assert row_counts() == before
    foreign.refresh_from_db()
    assert foreign.status == "pending_approval"


def test_a_link_to_a_request_corrected_since_is_refused(
    client, world, request_mailed, staff, row_counts
):
    call, _, approve, _ = request_mailed
    pending_action_correct(
        action_id=call.pk,
        user=staff.user,
        arguments={"start": world.day(11), "end": world.day(19)},
    )
    before = row_counts()

    page = client.post(opened(client, approve))

    assert page.status_code == 409 and "corrigió" in page.text
    assert row_counts() == before


def test_a_tampered_link_is_refused(client, request_mailed, row_counts):
    _, _, approve, _ = request_mailed
    before = row_counts()

    page = client.post(opened(client, approve[:-3] + "abc"))

    assert page.status_code == 404 and "no es válido" in page.text
    assert row_counts() == before


def test_a_links_token_stays_out_of_addresses_and_is_not_cached(client, request_mailed):
    """As Django's password reset: the first request keeps the token in the
    session and redirects to an address without it; no page of it is cached or
    sends its address as referrer."""
    _, _, approve, _ = request_mailed
    token = approve.rsplit("/", 1)[1]

    first = client.get(approve)
    page = client.get(first.url)

    assert first.status_code == 302 and token not in first.url
    assert page.status_code == 200 and token not in page.text
    for response in (first, page):
        assert "no-store" in response["Cache-Control"]
        assert response["Referrer-Policy"] == "strict-origin"  # no path


def test_a_page_opened_without_its_link_in_the_session_is_refused(
    client, request_mailed, row_counts
):
    _, _, approve, _ = request_mailed
    page = opened(client, approve)
    before = row_counts()

    refused = Client().post(page)  # another browser, without the session

    assert refused.status_code == 404 and "no es válido" in refused.text
    assert row_counts() == before


def test_no_log_line_holds_a_links_token(client, request_mailed, caplog):
    """Django's ``Forbidden: /inbox/link/<token>`` warnings held working links."""
    _, _, approve, reject = request_mailed
    tampered = approve[:-3] + "abc"
    with caplog.at_level(logging.DEBUG):
        client.post(opened(client, approve))
        client.post(opened(client, approve))  # used: refused
        client.post(opened(client, reject))  # already decided: refused
        client.post(opened(client, tampered))  # not valid: refused
        client.post(tampered)  # straight to the address, without a CSRF token

    logged = "\n".join(logging.Formatter().format(record) for record in caplog.records)
    assert "Forbidden" in logged or "Not Found" in logged  # refusals were logged
    for link in (approve, reject, tampered):
        assert link.rsplit("/", 1)[1] not in logged


def test_the_access_log_holds_no_links_token():
    """uvicorn's access log named every link's address with its token."""
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/inbox/link/eyJuIjoi:1vS:abc", "1.1", 302),
        None,
    )

    LinkTokensHidden().filter(record)

    assert "eyJuIjoi" not in record.getMessage()
    assert "/inbox/link/…" in record.getMessage()
