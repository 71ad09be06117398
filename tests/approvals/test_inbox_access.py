"""The staff inbox for everyone who uses it: each control names the request it
acts on, a decision that lost a race says so in its row at once, and the pages
wear the admin's look (its header, its themes, its ``<main>``)."""

from __future__ import annotations

import re

import pytest

from approvals.services import pending_action_approve
from tests.approvals.inbox_kit import unknown_food_write
from tests.approvals.test_pending_actions import request_freeze
from tests.factories import StaffRoleFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]


def names_in(html: str) -> list[str]:
    return re.findall(r'aria-label="([^"]*)"', html)


def test_each_control_of_a_request_names_the_request(staff_client, world, settings):
    """Select, Approve, Reason, Reject and the correction's Save say which
    request they decide: its tool and its member."""
    settings.LANGUAGE_CODE = "es"
    action = request_freeze(world)
    name = f"Congelar la cuota — {world.member}"

    page = staff_client.get("/inbox/").content.decode()

    row = page.split(f'id="action-{action.pk}"', 1)[1].split("</tr>", 1)[0]
    assert names_in(row) == [
        f"Seleccionar: {name}",
        f"Aprobar: {name}",
        f"Motivo: {name}",
        f"Rechazar: {name}",
        f"Guardar la corrección: {name}",
    ]


def test_each_control_of_a_case_names_the_case(staff_client, world, settings):
    """What happened, the note and Save say which case they settle."""
    settings.LANGUAGE_CODE = "es"
    handoff = unknown_food_write(world)
    name = f"Añadir un alimento al diario — {world.member}"

    page = staff_client.get("/inbox/handoffs/").content.decode()

    row = page.split(f'id="handoff-{handoff.pk}"', 1)[1].split("</tr>", 1)[0]
    assert names_in(row) == [
        f"Qué pasó en realidad: {name}",
        f"Nota: {name}",
        f"Guardar: {name}",
    ]


def test_a_decision_that_lost_the_race_says_so_in_its_row_at_once(
    staff_client, world, row_counts, settings
):
    """Another member of staff approved first: rejecting answers with the row,
    approved by them, saying that this rejection was not applied; nothing is
    written, and no message waits for a later page."""
    settings.LANGUAGE_CODE = "en"
    action = request_freeze(world)
    first = StaffRoleFactory(business=world.business, role="staff").user
    pending_action_approve(action_id=action.pk, user=first)
    before = row_counts()

    response = staff_client.post(
        f"/inbox/{action.pk}/reject",
        {"reason": "Closed in August"},
        headers={"HX-Request": "true"},
    )

    row = response.content.decode()
    assert response.status_code == 200
    assert f'id="action-{action.pk}" data-status="approved"' in row
    assert (
        f'<p class="lost" role="alert" tabindex="-1" autofocus>{first} decided '
        "first; your decision was not applied.</p>"
    ) in row
    assert row_counts() == before
    assert "decided first" not in staff_client.get("/inbox/").content.decode()
    assert "already decided" not in staff_client.get("/inbox/").content.decode()


def test_the_inbox_wears_the_admins_look(staff_client, world):
    """The inbox's pages have the admin's header and stylesheets (its dark
    theme with them), a <main>, and no side bar of the admin's apps."""
    for path in ("/inbox/", "/inbox/handoffs/", "/inbox/notifications"):
        page = staff_client.get(path).content.decode()
        assert '<header id="header">' in page, path
        assert "admin/css/dark_mode.css" in page, path
        assert '<main id="content-start"' in page, path
        assert "nav-sidebar" not in page, path
        assert 'aria-current="page"' in page, path
