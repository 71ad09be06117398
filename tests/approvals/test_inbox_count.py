"""How many requests wait for a staff member, where they look: the inbox's title
(on the page and on each refresh of its list) and the admin's header."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.selectors import pending_actions_count
from approvals.services import pending_action_reject
from gymnasia.admin_site import GymnasiaAdminSite
from tests.approvals.test_pending_actions import request_freeze
from tests.factories import StaffRoleFactory, UserFactory
from tests.tools.world import build_world
from tools.models import ToolCallLog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]

TITLE = "Requests waiting for approval · Gymnasia"


def two_waiting_one_rejected(world) -> None:
    """Three requests of the gym: two still waiting, one rejected."""
    request_freeze(world, start=10, end=19, conversation="conversation-1")
    request_freeze(world, start=20, end=29, conversation="conversation-2")
    rejected = request_freeze(world, start=30, end=39, conversation="conversation-3")
    owner = StaffRoleFactory(business=world.business).user
    pending_action_reject(action_id=rejected.pk, user=owner, reason="")


def test_inbox_title_counts_the_requests_waiting_at_the_staff_members_gym(
    staff_client, world, settings
):
    """Another gym's request and a decided one are not counted, on the page nor
    in the list's refresh, whose title htmx puts in the tab."""
    settings.LANGUAGE_CODE = "en"
    two_waiting_one_rejected(world)
    request_freeze(build_world())  # another gym's

    page = staff_client.get("/inbox/").content.decode()
    fragment = staff_client.get(
        "/inbox/", headers={"HX-Request": "true"}
    ).content.decode()

    assert f"<title>(2) {TITLE}</title>" in page
    assert page.count("<title>") == 1
    assert f"</table>\n<title>(2) {TITLE}</title>" in fragment
    # The header's count follows each refresh too (an out-of-band swap).
    assert fragment.rstrip().endswith(
        '<a href="/inbox/" id="inbox-link" hx-swap-oob="true">Inbox (2)</a>'
    )


def test_inbox_title_has_no_count_when_nothing_waits(staff_client, world, settings):
    settings.LANGUAGE_CODE = "en"
    request_freeze(build_world())  # another gym's

    page = staff_client.get("/inbox/").content.decode()
    fragment = staff_client.get(
        "/inbox/", headers={"HX-Request": "true"}
    ).content.decode()

    assert f"<title>{TITLE}</title>" in page
    assert f"<title>{TITLE}</title>" in fragment
    assert "(0)" not in page + fragment


def test_pending_actions_count_adds_up_the_users_gyms_in_one_query(
    world, django_assert_num_queries
):
    """A person working at two gyms counts the requests waiting at both, and no
    other gym's."""
    two_waiting_one_rejected(world)
    other_world = build_world()
    request_freeze(other_world)
    user = StaffRoleFactory(business=world.business, role="staff").user
    StaffRoleFactory(business=other_world.business, user=user, role="staff")
    request_freeze(build_world())  # a gym the user does not work at

    with django_assert_num_queries(1):
        count = pending_actions_count(user=user)

    assert count == 3


def test_pending_actions_count_is_none_for_a_user_of_no_gym(world):
    request_freeze(world)
    superuser = UserFactory(is_superuser=True)

    assert pending_actions_count(user=superuser) is None


def test_admin_header_links_to_the_inbox_with_the_count(staff_client, world, settings):
    settings.LANGUAGE_CODE = "en"
    two_waiting_one_rejected(world)
    request_freeze(build_world())  # another gym's

    page = staff_client.get("/admin/").content.decode()

    assert '<a href="/inbox/" id="inbox-link">Inbox (2)</a>' in page


def test_admin_header_has_no_inbox_link_for_a_user_of_no_gym(client, world):
    """A superuser who works at no gym has no inbox (it would refuse them)."""
    request_freeze(world)
    client.force_login(UserFactory(is_superuser=True))

    page = client.get("/admin/").content.decode()

    assert 'id="inbox-link"' not in page
    assert 'href="/inbox/"' not in page


def test_admin_header_costs_one_query(staff_client, world, monkeypatch):
    """An admin page asks the database once more than Django's own would, however
    many requests wait."""
    two_waiting_one_rejected(world)
    request_freeze(build_world())

    with CaptureQueriesContext(connection) as ours:
        staff_client.get("/admin/agents/agent/")
    monkeypatch.setattr(GymnasiaAdminSite, "each_context", admin.AdminSite.each_context)
    with CaptureQueriesContext(connection) as djangos:
        staff_client.get("/admin/agents/agent/")

    assert len(ours) - len(djangos) == 1


def test_admin_is_branded_gymnasia(staff_client, settings):
    """The header and the tab say Gymnasia, not Django administration."""
    settings.LANGUAGE_CODE = "en"

    page = staff_client.get("/admin/").content.decode()

    assert '<a href="/admin/">Gymnasia</a>' in page
    assert "<title>Administration | Gymnasia</title>" in page
    assert "Django" not in page


@pytest.mark.parametrize(
    ("query", "heading"),
    [
        ("?status=approved", "Approved requests"),
        ("?status=rejected", "Rejected requests"),
        ("?status=", "All requests"),
        ("?status=rejected&tool=freeze_membership", "Rejected requests: "),
    ],
)
def test_a_filters_title_says_what_is_shown(
    staff_client, world, settings, query, heading
):
    """Filtered to another status, the inbox no longer reads «Requests waiting
    for approval» nor «Nothing is waiting.»; the tab keeps the count waiting."""
    settings.LANGUAGE_CODE = "en"
    two_waiting_one_rejected(world)

    page = staff_client.get(f"/inbox/{query}").content.decode()

    assert f"<h1>{heading}" in page
    assert f"<title>(2) {heading}" in page
    assert "Requests waiting for approval" not in page
    assert "Nothing is waiting." not in page


def test_a_filter_that_shows_nothing_says_so_in_its_words(
    staff_client, world, settings
):
    settings.LANGUAGE_CODE = "es"
    two_waiting_one_rejected(world)

    page = staff_client.get("/inbox/?status=approved").content.decode()

    assert "<h1>Solicitudes aprobadas</h1>" in page
    assert "Ninguna solicitud coincide con este filtro." in page
    assert "pendientes de aprobación" not in page
    assert "No hay nada pendiente" not in page


def test_a_decision_brings_the_headers_new_count(staff_client, world, settings):
    """The decided row comes with the header's link, swapped out of band: the
    count follows the decision without a reload."""
    settings.LANGUAGE_CODE = "en"
    two_waiting_one_rejected(world)
    waiting = ToolCallLog.objects.filter(status="pending_approval").first()

    answer = staff_client.post(
        f"/inbox/{waiting.pk}/approve", headers={"HX-Request": "true"}
    ).content.decode()

    assert f'id="action-{waiting.pk}"' in answer
    assert (
        '<a href="/inbox/" id="inbox-link" hx-swap-oob="true">Inbox (1)</a>' in answer
    )


def test_the_cases_filtered_to_resolved_do_not_say_none_is_open(staff_client, settings):
    settings.LANGUAGE_CODE = "en"

    page = staff_client.get("/inbox/handoffs/?status=resolved").content.decode()

    assert "No case matches this filter." in page
    assert "No open cases." not in page
    assert "No open cases." in staff_client.get("/inbox/handoffs/").content.decode()
