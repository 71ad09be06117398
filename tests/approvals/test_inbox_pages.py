"""The staff inbox's pages: past the newest 50 rows, the older ones a link away,
each page itself while new rows arrive."""

from __future__ import annotations

import re

import pytest

from tests.approvals.test_pending_actions import request_freeze
from tests.tools.world import build_world
from tools.models import Handoff, ToolCallLog

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_broker")]


def _requests(world, count: int) -> list[ToolCallLog]:
    """``count`` requests waiting, each a day's freeze of its own, oldest first."""
    return [
        request_freeze(world, start=n, end=n, conversation=f"conversation-{n}")
        for n in range(1, count + 1)
    ]


def _shown(page: str, kind: str) -> list[str]:
    """The keys of the rows a page shows, in order."""
    return re.findall(rf'<tr id="{kind}-([0-9a-f-]+)"', page)


def _link(page: str, words: str) -> str | None:
    """The address of the link with those words, if the page has one."""
    found = re.search(rf'<a href="([^"]+)">{words}</a>', page)
    return found[1].replace("&amp;", "&") if found else None


def test_older_requests_are_a_page_away_never_out_of_reach(staff_client, world):
    """Past the 50 newest requests, the oldest (the first to expire) are on the
    next page, not hidden; every request shows once, newest first, and the
    first page leads back."""
    # given 52 requests waiting
    actions = _requests(world, 52)
    newest_first = [str(a.pk) for a in reversed(actions)]

    # when staff open the inbox, then its older page
    first = staff_client.get("/inbox/", headers={"Accept-Language": "en"})
    older = _link(first.content.decode(), "Older requests")
    assert older is not None
    second = staff_client.get(older, headers={"Accept-Language": "en"})

    # then the two pages show them all once, newest first, and lead back
    first_page, second_page = first.content.decode(), second.content.decode()
    assert _shown(first_page, "action") == newest_first[:50]
    assert _shown(second_page, "action") == newest_first[50:]
    assert _link(first_page, "Newest requests") is None
    assert _link(second_page, "Older requests") is None
    assert _link(second_page, "Newest requests") == "/inbox/?status=pending&tool="


def test_a_page_of_older_requests_refreshes_as_itself(staff_client, world):
    """The older page's refresh asks for that page again: a new request coming in
    neither moves its rows nor sends staff back to the first page."""
    actions = _requests(world, 51)
    first = staff_client.get("/inbox/", headers={"Accept-Language": "en"})
    older = _link(first.content.decode(), "Older requests") or ""
    page = staff_client.get(older).content.decode()
    refresh = re.search(r'hx-get="([^"]+)"', page)
    assert refresh is not None

    request_freeze(world, start=60, end=60, conversation="conversation-new")
    refreshed = staff_client.get(
        refresh[1].replace("&amp;", "&"), headers={"HX-Request": "true"}
    ).content.decode()

    assert _shown(refreshed, "action") == [str(actions[0].pk)]


@pytest.mark.parametrize(
    "cursor", ["not-a-key", "00000000-0000-0000-0000-000000000000"]
)
def test_a_page_asked_after_a_row_no_list_has_is_the_first(staff_client, world, cursor):
    """A key that is no row of the list (crafted, or another gym's) shows the
    first page, never a server error."""
    action = request_freeze(world)
    theirs = request_freeze(build_world())

    for key in (cursor, str(theirs.pk)):
        page = staff_client.get("/inbox/", {"cursor": key}).content.decode()
        assert _shown(page, "action") == [str(action.pk)]


def test_older_cases_are_a_page_away(staff_client, world):
    """Past the 50 newest open cases, the older ones are on the next page."""
    cases = [
        Handoff.objects.create(
            business=world.business,
            member=world.member,
            conversation_key=f"conversation-{n}",
            cause=Handoff.Cause.MEMBER_ASKED,
            reason=f"Caso {n}",
        )
        for n in range(51)
    ]
    newest_first = [str(c.pk) for c in reversed(cases)]

    first = staff_client.get("/inbox/handoffs/", headers={"Accept-Language": "es"})
    older = _link(first.content.decode(), "Casos anteriores")
    assert older is not None
    second = staff_client.get(older, headers={"Accept-Language": "es"})

    assert _shown(first.content.decode(), "handoff") == newest_first[:50]
    assert _shown(second.content.decode(), "handoff") == newest_first[50:]
    assert (
        _link(second.content.decode(), "Casos más recientes")
        == "/inbox/handoffs/?status=open"
    )
