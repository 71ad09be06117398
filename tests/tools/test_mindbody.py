"""The ``classes`` and ``memberships`` tools served by the gym's Mindbody site: the
real client and the real dispatcher against a fake Mindbody on loopback."""

from __future__ import annotations

import json
import logging

import pytest
from django.utils import translation

from gymnasia.refusals import refusals_said
from tests.tools.mindbody_world import class_at, client_of, connect_mindbody
from tools.integrations import client_for
from tools.models import Handoff, Integration, ToolCallLog
from tools.selection import offered_tools

pytestmark = pytest.mark.django_db

BOOK = "/class/addclienttoclass"
ROSTER = "/class/classvisits"


@pytest.fixture
def gym(world, mindbody_settings):
    """The world's gym with its classes and memberships in Mindbody; the member
    is a client there (the id she signs in with), and so is someone else."""
    fake = mindbody_settings
    world.integration = connect_mindbody(world.business, fake)
    world.client = client_of(fake, world.member)
    world.stranger = str(fake.add_client(client_id="900001", first_name="Otra"))
    world.fake = fake
    return world


def test_list_classes_reads_one_page_of_mindbody_classes(gym):
    spinning = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    yoga = class_at(
        gym.fake, gym.business, days=2, hour=9, name="Yoga", booked_by=[gym.client]
    )
    result = gym.call("list_classes", {"date_from": gym.day(0), "date_to": gym.day(6)})
    assert result.status == "ok", result.payload
    sessions = result.payload["sessions"]
    assert [(s["session_id"], s["class"]) for s in sessions] == [
        (spinning, "Spinning"),
        (yoga, "Yoga"),
    ]
    assert sessions[0]["starts_at"].startswith(f"{gym.day(1)}T18:00")
    assert [s["member_booked"] for s in sessions] == [False, True]
    assert gym.fake.count("GET", "/class/classes") == 1


def test_list_classes_follows_the_pages(gym):
    for hour in range(8, 20):
        for day in range(1, 12):
            class_at(gym.fake, gym.business, days=day, hour=hour, name="Zumba")
    result = gym.call("list_classes", {"date_from": gym.day(0), "date_to": gym.day(20)})
    assert result.payload["count"] == 132
    offsets = [
        r["query"].get("request.offset")
        for r in gym.fake.requests
        if r["path"] == "/class/classes"
    ]
    assert offsets == [["0"], ["100"]]


def test_book_class_is_verified_with_two_calls_and_one_token(gym):
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    result = gym.call("book_class", {"session_id": session})
    assert result.status == "ok", result.payload
    assert result.payload["verification"] == "verified"
    assert result.payload["booking"]["session_id"] == session
    assert gym.fake.roster(session) == [gym.client]
    [post] = [r for r in gym.fake.requests if r["path"] == BOOK]
    assert post["json"]["ClientId"] == gym.client  # the identity's, never the model's
    assert post["headers"]["api-key"] == gym.fake.api_key
    assert post["headers"]["siteid"] == gym.fake.site_id
    assert post["headers"]["authorization"]  # the staff token, as issued
    assert gym.fake.count("POST", "/usertoken/issue") == 1
    gym.call("list_my_bookings", {}, call_id="call-2")
    assert gym.fake.count("POST", "/usertoken/issue") == 1  # reused


def test_a_lost_booking_answer_is_read_back_and_never_sent_again(gym):
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    gym.fake.fault("POST", BOOK, "lost_after")
    result = gym.call("book_class", {"session_id": session})
    assert result.status == "ok", result.payload
    assert result.payload["verification"] == "verified"
    assert gym.fake.roster(session) == [gym.client]  # exactly one booking
    assert gym.fake.count("POST", BOOK) == 1
    assert gym.fake.count("GET", ROSTER) == 1
    assert not Handoff.objects.exists()


def test_a_booking_neither_found_nor_refused_goes_to_a_person(gym):
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    gym.fake.fault("POST", BOOK, "error_500")
    result = gym.call("book_class", {"session_id": session})
    assert result.status == "unknown_outcome"
    assert result.payload["verification"] == "unverifiable"
    assert gym.fake.count("POST", BOOK) == 1  # never retried blind
    assert gym.fake.count("GET", ROSTER) == 1  # it was read back
    assert Handoff.objects.get().tool_call_id == ToolCallLog.objects.get().pk


def test_a_refused_connection_is_retried_after_reading_the_roster(gym, monkeypatch):
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    gym.call("list_classes", {"date_from": gym.day(0), "date_to": gym.day(2)})
    gym.fake.fault("POST", BOOK, "refused", seconds=3600)
    monkeypatch.setattr(
        "tools.execution._pause", lambda seconds: gym.fake.listen_again()
    )
    result = gym.call("book_class", {"session_id": session}, call_id="call-2")
    assert result.status == "ok", result.payload
    assert gym.fake.roster(session) == [gym.client]
    paths = [r["path"] for r in gym.fake.requests]
    assert paths[-3:-1] == [ROSTER, BOOK]  # read back before it was sent again
    log = ToolCallLog.objects.get(provider_call_id="call-2")
    assert log.attempts == 2


def test_a_full_class_is_refused_in_the_members_words(gym):
    full = class_at(
        gym.fake,
        gym.business,
        days=1,
        hour=19,
        name="Yoga",
        capacity=1,
        booked_by=[gym.stranger],
    )
    result = gym.call("book_class", {"session_id": full})
    assert result.status == "invalid_arguments"
    assert result.payload["verification"] == "not_applied"
    assert [r["code"] for r in result.payload["refusals"]] == ["class_full"]
    with translation.override("es"):
        assert refusals_said(result.payload["refusals"]) == "Esa clase está completa."
    assert gym.fake.roster(full) == [gym.stranger]


def test_a_class_the_member_cannot_pay_fails_in_her_words(gym):
    payless = str(
        gym.fake.add_client(client_id=gym.other_member.external_id, can_pay=False)
    )
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    result = gym.call("book_class", {"session_id": session}, member=gym.other_member)
    assert result.status == "failed"
    assert [r["code"] for r in result.payload["refusals"]] == ["class_requires_payment"]
    with translation.override("en"):
        said = refusals_said(result.payload["refusals"])
    assert "pass" in said and "pay" in said
    assert payless not in gym.fake.roster(session)
    assert gym.fake.count("POST", BOOK) == 1


def test_cancel_booking_removes_the_members_visit_and_verifies_it(gym):
    session = class_at(
        gym.fake, gym.business, days=1, hour=18, name="Spinning", booked_by=[gym.client]
    )
    [booking] = gym.call("list_my_bookings", {}).payload["bookings"]
    assert booking["session_id"] == session
    result = gym.call(
        "cancel_booking", {"booking_id": booking["booking_id"]}, call_id="call-2"
    )
    assert result.status == "ok", result.payload
    assert result.payload["verification"] == "verified"
    assert gym.fake.roster(session) == []


def test_another_clients_booking_id_is_not_found(gym):
    session = class_at(
        gym.fake,
        gym.business,
        days=1,
        hour=18,
        name="Spinning",
        booked_by=[gym.stranger],
    )
    [theirs] = [v for v in gym.fake.visits if str(v.client_id) == gym.stranger]
    result = gym.call("cancel_booking", {"booking_id": theirs.id})
    assert result.status == "not_found"
    assert gym.fake.roster(session) == [gym.stranger]
    assert gym.fake.count("POST", "/class/removeclientfromclass") == 0


def test_an_expired_token_is_issued_again_once(gym):
    gym.call("list_my_bookings", {})
    gym.fake.expire_tokens()
    result = gym.call("list_my_bookings", {}, call_id="call-2")
    assert result.status == "no_results"
    assert gym.fake.count("POST", "/usertoken/issue") == 2


def test_refused_credentials_hide_the_tools_they_serve(gym):
    gym.fake.staff_denied = True
    result = gym.call("list_my_bookings", {})
    assert result.status == "unavailable"
    gym.integration.refresh_from_db()
    assert gym.integration.status == "failing"
    assert "permission" in gym.integration.last_error
    agent = type("AgentLike", (), {"business_id": gym.business.pk, "pk": None})()
    selection = offered_tools(agent, gym.member)
    assert selection.excluded["book_class"] == "integration_failing"
    assert selection.sources["book_class"] == "mindbody"
    assert selection.sources["freeze_membership"] == "built_in"


def test_a_rate_limit_is_unavailable_and_waited_out(gym):
    gym.fake.fault("GET", "/class/classes", "rate_limited", seconds=30)
    dates = {"date_from": gym.day(0), "date_to": gym.day(2)}
    result = gym.call("list_classes", dates)
    assert result.status == "unavailable"
    again = gym.call("list_classes", dates, call_id="call-2")
    assert again.status == "unavailable"
    assert gym.fake.count("GET", "/class/classes") == 1  # Retry-After respected


def test_get_membership_reads_the_clients_active_contract(gym):
    gym.fake.add_contract(
        client_id=gym.client,
        name="Mensual ilimitado",
        start=gym.today.replace(day=1),
        end=gym.today.replace(year=gym.today.year + 1),
    )
    result = gym.call("get_membership", {})
    assert result.status == "ok", result.payload
    assert result.payload["membership"]["plan"] == "Mensual ilimitado"
    assert result.payload["membership"]["status"] == "active"


def test_freeze_membership_stays_on_the_built_in_domain(gym):
    client = client_for("memberships", gym.business)
    freeze = client.freeze(
        member=gym.member, start=gym.today, end=gym.today.replace(day=gym.today.day)
    )
    assert freeze["start"] == gym.today.isoformat()
    assert not gym.fake.suspensions
    assert gym.fake.count("POST", "/client/suspendcontract") == 0


def test_no_secret_reaches_a_result_a_log_or_the_verification_log(gym, caplog):
    caplog.set_level(logging.DEBUG)
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    gym.fake.fault("POST", BOOK, "error_500")
    results = [
        gym.call("book_class", {"session_id": session}),
        gym.call("list_my_bookings", {}, call_id="call-2"),
    ]
    gym.fake.staff_denied = True
    results.append(
        gym.call(
            "list_classes",
            {"date_from": gym.day(0), "date_to": gym.day(1)},
            call_id="call-3",
        )
    )
    tokens = [
        r["headers"].get("authorization", "").split()[-1]
        for r in gym.fake.requests
        if r["headers"].get("authorization")
    ]
    recorded = json.dumps(
        [
            [dict(r.payload) for r in results],
            list(ToolCallLog.objects.values("result", "steps", "arguments")),
            list(Handoff.objects.values("tried", "reason")),
            list(Integration.objects.values("last_error", "config")),
        ],
        default=str,
    )
    seen = recorded + caplog.text + repr(client_for("classes", gym.business))
    for secret in (gym.fake.api_key, gym.fake.staff_password, *tokens):
        assert secret not in seen
    assert (
        gym.fake.staff_password
        not in Integration.objects.get(kind="mindbody").credentials_encrypted
    )


def test_a_vendor_the_owner_disconnected_leaves_its_kinds_built_in(gym):
    gym.integration.status = "disconnected"
    gym.integration.save()
    result = gym.call("list_my_bookings", {})
    assert result.status == "ok"  # the built-in booking of the world
    assert gym.fake.requests == []


def test_unknown_call_arguments_never_pick_the_client(gym):
    """The model cannot name a client: a ``ClientId`` in its arguments is refused."""
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    result = gym.call("book_class", {"session_id": session, "client_id": gym.stranger})
    assert result.status == "invalid_arguments"
    assert gym.fake.count("POST", BOOK) == 0


def test_without_the_client_id_a_member_is_matched_by_her_email(gym):
    gym.integration.config = {**gym.integration.config, "member_id_is_client_id": False}
    gym.integration.save()
    gym.other_member.email = "otra.socia@example.com"
    gym.other_member.save()
    gym.fake.add_client(client_id="554", email="otra.socia@example.com.es")
    by_email = str(gym.fake.add_client(client_id="555", email=gym.other_member.email))
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    result = gym.call("book_class", {"session_id": session}, member=gym.other_member)
    assert result.status == "ok", result.payload
    assert gym.fake.roster(session) == [by_email]


def test_a_member_with_no_client_record_is_told_so_and_nothing_is_sent(gym):
    gym.integration.config = {**gym.integration.config, "member_id_is_client_id": False}
    gym.integration.save()
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    result = gym.call("book_class", {"session_id": session}, member=gym.other_member)
    assert result.status == "not_found"
    assert result.payload["refusals"][0]["code"] == "member_not_found"
    assert gym.fake.count("POST", BOOK) == 0


def test_a_gated_booking_is_checked_by_mindbody_and_books_nothing(gym):
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    full = class_at(
        gym.fake,
        gym.business,
        days=1,
        hour=19,
        name="Yoga",
        capacity=1,
        booked_by=[gym.stranger],
    )
    gated = {"book_class": "gated"}
    waiting = gym.call("book_class", {"session_id": session}, offered=gated)
    assert waiting.status == "pending_approval"
    refused = gym.call(
        "book_class", {"session_id": full}, offered=gated, call_id="call-2"
    )
    assert refused.status == "invalid_arguments"
    tests = [r["json"]["Test"] for r in gym.fake.requests if r["path"] == BOOK]
    assert tests == [True, True]
    assert gym.fake.roster(session) == []


def test_the_daily_call_limit_is_unavailable_until_retry_after(gym):
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    gym.call("list_my_bookings", {})
    gym.fake.fault("POST", BOOK, "daily_limit")
    result = gym.call("book_class", {"session_id": session}, call_id="call-2")
    assert result.status == "unavailable"
    assert result.payload["verification"] == "not_applied"
    assert gym.fake.count("POST", BOOK) == 1
    assert gym.fake.roster(session) == []


def test_an_address_the_operator_does_not_list_gets_nothing(gym, settings):
    settings.MINDBODY_API_BASES = ["https://api.mindbodyonline.com/public/v6"]
    result = gym.call("list_my_bookings", {})
    assert result.status == "unavailable"
    assert gym.fake.requests == []


def test_a_lost_answer_that_cannot_be_read_back_goes_to_a_person(gym):
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    gym.fake.fault("POST", BOOK, "lost_after")
    gym.fake.fault("GET", ROSTER, "error_500")
    result = gym.call("book_class", {"session_id": session})
    assert result.status == "unknown_outcome"  # not "unavailable": it was booked
    assert gym.fake.roster(session) == [gym.client]
    assert gym.fake.count("POST", BOOK) == 1
    assert Handoff.objects.count() == 1


def test_a_token_refused_again_right_after_issue_stops_and_is_told(gym):
    """Issued once again, never in a loop: a fresh token refused as well means
    the staff user is refused, and the integration fails until tested again."""
    gym.call("list_my_bookings", {})
    gym.fake.fault("GET", "/client/clientvisits", "token_expired", times=5)
    result = gym.call("list_my_bookings", {}, call_id="call-2")
    assert result.status == "unavailable"
    assert gym.fake.count("POST", "/usertoken/issue") == 2
    assert gym.fake.count("GET", "/client/clientvisits") == 3  # 1 + 2
    gym.integration.refresh_from_db()
    assert gym.integration.status == "failing"


def test_staff_read_a_mindbody_session_and_booking_by_their_mindbody_names(gym):
    """A request's ids are named from Mindbody, never from a built-in session
    that happens to have the same number."""
    from tools.naming import request_arguments_described

    same_number = gym.ids["session_id:yoga"]
    class_at(
        gym.fake,
        gym.business,
        days=1,
        hour=7,
        name="Bodypump",
        class_id=same_number,
        booked_by=[gym.client],
    )
    [visit] = [v for v in gym.fake.visits if v.class_id == same_number]
    for arguments in ({"session_id": same_number}, {"booking_id": visit.id}):
        [described] = request_arguments_described(
            business=gym.business, member=gym.member, arguments=arguments
        )
        assert described.words.startswith("Bodypump, "), described
    [unknown] = request_arguments_described(
        business=gym.business, member=gym.member, arguments={"session_id": 424242}
    )
    assert "Yoga" not in unknown.words and "Bodypump" not in unknown.words


def test_a_booking_answered_too_late_is_read_back_not_sent_again(gym):
    session = class_at(gym.fake, gym.business, days=1, hour=18, name="Spinning")
    gym.fake.fault("POST", BOOK, "slow", seconds=2.5)  # the client waits 1 s
    result = gym.call("book_class", {"session_id": session})
    assert result.status == "ok", result.payload
    assert result.payload["verification"] == "verified"
    assert gym.fake.roster(session) == [gym.client]
    assert gym.fake.count("POST", BOOK) == 1


def test_times_written_in_utc_are_told_in_the_gyms_time(gym):
    gym.fake.datetime_style = "utc"
    session = class_at(
        gym.fake, gym.business, days=1, hour=18, name="Spinning", booked_by=[gym.client]
    )
    listed = gym.call("list_classes", {"date_from": gym.day(1), "date_to": gym.day(1)})
    [found] = listed.payload["sessions"]
    assert (found["session_id"], found["member_booked"]) == (session, True)
    assert found["starts_at"].startswith(f"{gym.day(1)}T18:00")
    [booking] = gym.call("list_my_bookings", {}, call_id="call-2").payload["bookings"]
    assert booking["starts_at"] == found["starts_at"]
