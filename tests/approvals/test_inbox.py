"""The staff inbox: a gym's staff see and decide their own gym's requests only."""

from __future__ import annotations

import re
from importlib import import_module

import pytest
from django.apps import apps
from django.test import Client

from approvals.models import PendingAction
from approvals.services import pending_action_approve, pending_action_execute
from tests.approvals.test_pending_actions import request_freeze
from tests.factories import BusinessFactory, StaffRoleFactory
from tests.tools.world import build_world
from tools.integrations.faults import Fault, inject_fault
from tools.models import Handoff

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, world):
    client.force_login(StaffRoleFactory(business=world.business, role="staff").user)
    return client


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    """Approval messages are recorded instead of sent: delivery is not under test."""
    sent: list[str] = []
    monkeypatch.setattr(
        "approvals.tasks.execute_approved_action.delay",
        lambda action_id: sent.append(action_id),
    )
    return sent


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


def test_a_requests_arguments_are_named_in_words(staff_client, world, settings):
    """Staff read "Inicio" and "Fin", not the tool's argument names."""
    settings.LANGUAGE_CODE = "es"
    request_freeze(world)
    page = staff_client.get("/inbox/", headers={"Accept-Language": "es"}).content
    page = page.decode()
    assert f'<span title="start">Inicio</span>: {world.day(10)}' in page
    assert '<span title="end">Fin</span>:' in page
    assert "<code>start</code>" not in page
    # The correction form too, with a date picker for a date.
    assert (
        f'<label>Inicio <input type="date" name="start" value="{world.day(10)}">'
        in page
    )


def test_the_list_refreshes_itself_as_a_fragment(staff_client, world):
    request_freeze(world)
    fragment = staff_client.get(
        "/inbox/", headers={"HX-Request": "true"}
    ).content.decode()
    assert fragment.startswith("<table")
    assert "hx-trigger=\"every 5s [inboxIdle('actions')]\"" in fragment
    assert "<html" not in fragment


def test_the_cases_list_also_waits_while_staff_are_deciding(staff_client, world):
    """The cases refresh as requests do, not while a note is being written."""
    fragment = staff_client.get(
        "/inbox/handoffs/", headers={"HX-Request": "true"}
    ).content.decode()
    assert "hx-trigger=\"every 5s [inboxIdle('handoffs')]\"" in fragment


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
    assert (action.status, action.decision_reason) == ("rejected", "Cerrado en agosto")


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
    assert action.status == "pending"
    assert row_counts() == before
    assert told in staff_client.get("/inbox/").content.decode()


def test_a_reason_of_the_longest_length_is_kept_whole(staff_client, world):
    action = request_freeze(world)
    assert (
        'name="reason" maxlength="1000"' in staff_client.get("/inbox/").content.decode()
    )

    staff_client.post(f"/inbox/{action.pk}/reject", {"reason": "x" * 1000})

    action.refresh_from_db()
    assert (action.status, len(action.decision_reason)) == ("rejected", 1000)


def test_approve_selected(staff_client, world):
    first, second = request_freeze(world, 10, 12), request_freeze(world, 20, 22)
    staff_client.post("/inbox/approve-selected", {"ids": [first.pk, second.pk]})
    assert set(PendingAction.objects.values_list("status", flat=True)) == {"approved"}


@pytest.mark.parametrize(
    ("requests", "told"),
    [(1, "1 solicitud aprobada."), (2, "2 solicitudes aprobadas.")],
    ids=["one", "two"],
)
def test_approving_selected_requests_says_how_many_in_the_staffs_language(
    staff_client, world, requests, told
):
    """One request approved reads "1 solicitud aprobada.", in the singular (it
    read "1 solicitudes aprobadas.")."""
    # given pending requests
    actions = [
        request_freeze(world, 10 * n, 10 * n + 2) for n in range(1, 1 + requests)
    ]

    # when Spanish staff approve them all at once
    response = staff_client.post(
        "/inbox/approve-selected",
        {"ids": [a.pk for a in actions]},
        headers={"Accept-Language": "es"},
        follow=True,
    )

    # then the page says how many, in the right number
    assert told in response.content.decode()


def test_another_gyms_request_is_not_found(staff_client, row_counts):
    other = request_freeze(build_world())
    before = row_counts()
    response = staff_client.post(f"/inbox/{other.pk}/approve")
    assert response.status_code == 404
    assert row_counts() == before
    other.refresh_from_db()
    assert other.status == "pending"


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
    assert action.status == "pending"


def _unknown_food_write(world) -> Handoff:
    """The case of 40 g of oats added to dinner whose answer never came back."""
    with inject_fault("nutrition", Fault.TIMEOUT_AFTER_COMMIT):
        world.call(
            "add_food_to_meal",
            {
                "date": world.day(0),
                "meal": "dinner",
                "food_id": world.ids["food_id:oats"],
                "grams": 40,
            },
        )
    return Handoff.objects.get()


def test_a_handoff_is_settled_with_what_happened(staff_client, world):
    handoff = _unknown_food_write(world)
    page = staff_client.get(
        "/inbox/handoffs/", headers={"Accept-Language": "en"}
    ).content.decode()
    assert f'id="handoff-{handoff.pk}"' in page
    assert '<span title="grams">Grams</span>: 40' in page  # what was tried
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
    assert "<td>anonymous visitor</td>" in visitor
    assert f"<td>{world.member.external_id}</td>" in member
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
    assert action.status == "pending"


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
    assert "<td>anonymous visitor</td>" in row.split("</tr>", 1)[0]


def _row(page: str, action: PendingAction) -> str:
    """The inbox's row of one request."""
    return page.split(f'id="action-{action.pk}"', 1)[1].split("</tr>", 1)[0]


def test_an_executed_requests_outcome_reads_in_the_staffs_language(staff_client, world):
    """Spanish staff read how an approved request ran in words, "hecho /
    verificado", with the recorded codes kept for the curious in a title (it
    read "ok / verified")."""
    # given a request approved and executed
    action = request_freeze(world)
    staff = StaffRoleFactory(business=world.business, role="staff").user
    pending_action_approve(action_id=action.pk, user=staff)
    assert pending_action_execute(action_id=action.pk) == "succeeded"

    # when Spanish staff list the requests done
    page = staff_client.get(
        "/inbox/?status=succeeded", headers={"Accept-Language": "es"}
    ).content.decode()

    # then its execution reads in Spanish words
    row = _row(page, action)
    assert 'ejecución: <span title="ok">hecho</span>' in row
    assert '<span title="verified">verificado</span>' in row
    assert "ok / verified" not in row


def _case_row(page: str, handoff: Handoff) -> str:
    """The cases list's row of one case, its words only: the tags (and the
    arguments' names in their titles) left out."""
    row = page.split(f'id="handoff-{handoff.pk}"', 1)[1].split("</tr>", 1)[0]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row))


def test_a_case_whose_outcome_is_unknown_reads_in_the_staffs_language(
    staff_client, world
):
    """A write nobody knows the outcome of is named by the tool's title and says
    what is known in Spanish (it read "Could not confirm add_food_to_meal." and
    "The request was sent and no answer came back; it may have been done.")."""
    # given a write whose answer never came back
    handoff = _unknown_food_write(world)

    # when Spanish staff open the cases
    page = staff_client.get(
        "/inbox/handoffs/", headers={"Accept-Language": "es"}
    ).content.decode()

    # then the case reads in Spanish, with the tool's title
    case = _case_row(page, handoff)
    assert "No se ha podido confirmar: Añadir un alimento al diario." in case
    assert "Se envió la petición y no llegó respuesta; puede que se haya hecho." in case
    assert "Could not confirm" not in case
    assert "add_food_to_meal" not in case


def test_a_member_asking_for_a_person_reads_in_the_staffs_language(staff_client, world):
    """A member's own request for a person shows their words and says, in
    Spanish, that they asked for a person (it read "The member asked for a
    person.")."""
    # given a member who asked for a person
    world.call("handoff_to_staff", {"reason": "Quiero hablar con alguien"})
    handoff = Handoff.objects.get()

    # when Spanish staff open the cases
    page = staff_client.get(
        "/inbox/handoffs/", headers={"Accept-Language": "es"}
    ).content.decode()

    # then the member's words are shown, and what is known is in Spanish
    case = _case_row(page, handoff)
    assert "Quiero hablar con alguien" in case
    assert "El socio ha pedido hablar con una persona." in case
    assert "asked for a person" not in case


@pytest.mark.parametrize(
    ("reason", "known", "tried", "title", "said"),
    [
        (
            "Could not confirm freeze_membership.",
            "The integration answered that it was done, but looking again could "
            "not confirm it.",
            {"tool": "freeze_membership"},
            "No se ha podido confirmar: Congelar la cuota.",
            "La integración respondió que estaba hecho, pero al volver a mirar no "
            "se ha podido confirmar.",
        ),
        (
            "Could not confirm the approved freeze_membership.",
            "The approved action started and its worker stopped before recording "
            "the outcome; it may or may not have been done.",
            {"tool": "freeze_membership"},
            "No se ha podido confirmar la solicitud aprobada: Congelar la cuota.",
            "La acción aprobada empezó y su proceso se detuvo antes de anotar el "
            "resultado; puede que se haya hecho o no.",
        ),
        (
            "Could not confirm book_class.",
            "The handler stopped with KeyError; it may have acted.",
            {"tool": "book_class"},
            "No se ha podido confirmar: Reservar una clase.",
            "El programa se detuvo con un fallo (KeyError) mientras hacía el "
            "cambio; puede que lo haya hecho.",
        ),
        (
            "Could not confirm freeze_membership.",
            "",
            {"tool": "freeze_membership"},
            "Could not confirm freeze_membership.",
            "",
        ),
        (
            "Quiero hablar con alguien",
            "The member asked for a person.",
            {},
            "Quiero hablar con alguien",
            "El socio ha pedido hablar con una persona.",
        ),
        (
            "Algo que nadie reconoce",
            "Tal cual",
            {},
            "Algo que nadie reconoce",
            "Tal cual",
        ),
    ],
    ids=[
        "not confirmed",
        "worker stopped",
        "handler failed",
        "no words of what is known: as recorded",
        "member asked",
        "words no code knows",
    ],
)
def test_a_case_recorded_in_english_words_reads_in_the_staffs_language(
    staff_client, world, reason, known, tried, title, said
):
    """Cases recorded before their cause was a code kept English words: the
    migration that made causes codes gives those the harness wrote their cause,
    so they read in Spanish too, their words kept as recorded. Words no code
    knows are shown as recorded."""
    # given a case recorded with English words, when causes became codes
    handoff = Handoff.objects.create(
        business=world.business,
        member=world.member,
        conversation_key="conversation-1",
        reason=reason,
        known=known,
        tried=tried,
    )
    import_module("tools.migrations.0005_handoff_cause").causes_filled(apps, None)

    # when Spanish staff open the cases
    page = staff_client.get(
        "/inbox/handoffs/", headers={"Accept-Language": "es"}
    ).content.decode()

    # then it reads in Spanish, and the record is unchanged
    case = _case_row(page, handoff)
    assert f" {title} " in case
    assert said in case
    handoff.refresh_from_db()
    assert (handoff.reason, handoff.known) == (reason, known)


def test_a_meal_reads_in_the_staffs_language_and_is_corrected_as_recorded(
    staff_client, world
):
    """Spanish staff read the meal of a request in words, "Cena" (it read the
    argument's value, "dinner"); the correction form offers the meals in words,
    each sending the value the tool takes, the request's chosen."""
    # given a request to add food to a meal waiting for approval, and a case of
    # one whose answer never came back
    arguments = {
        "date": world.day(0),
        "meal": "dinner",
        "food_id": world.ids["food_id:oats"],
        "grams": 40,
    }
    world.call("add_food_to_meal", arguments, offered={"add_food_to_meal": "gated"})
    action = PendingAction.objects.get()
    with inject_fault("nutrition", Fault.TIMEOUT_AFTER_COMMIT):
        world.call("add_food_to_meal", {**arguments, "grams": 50}, call_id="call-2")
    handoff = Handoff.objects.get()

    # when Spanish staff open the requests and the cases
    requests = staff_client.get("/inbox/", headers={"Accept-Language": "es"})
    cases = staff_client.get("/inbox/handoffs/", headers={"Accept-Language": "es"})

    # then the meal reads "Cena"; the correction form chooses among the meals
    row = _row(requests.content.decode(), action)
    assert '<span title="meal">Comida</span>: Cena</li>' in row
    assert re.findall(r'<option value="(\w+)"( selected)?>(\w+)</option>', row) == [
        ("breakfast", "", "Desayuno"),
        ("lunch", "", "Comida"),
        ("dinner", " selected", "Cena"),
        ("snack", "", "Tentempié"),
    ]
    case = cases.content.decode().split(f'id="handoff-{handoff.pk}"', 1)[1]
    assert '<span title="meal">Comida</span>: Cena</li>' in case


# --- pages of older rows ----------------------------------------------------------


def _requests(world, count: int) -> list[PendingAction]:
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
    "before", ["not-a-key", "00000000-0000-0000-0000-000000000000"]
)
def test_a_page_asked_after_a_row_no_list_has_is_the_first(staff_client, world, before):
    """A key that is no row of the list (crafted, or another gym's) shows the
    first page, never a server error."""
    action = request_freeze(world)
    theirs = request_freeze(build_world())

    for key in (before, str(theirs.pk)):
        page = staff_client.get("/inbox/", {"before": key}).content.decode()
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
