"""``get_membership`` from the gym's Mindbody site says only what its reads prove:
a contract in force today is ``active``; one Mindbody shows suspended is not; an
ended, terminated or not yet started one is no membership, and a member with
none hears the built-in tool's ``no_results``."""

from __future__ import annotations

import datetime

import pytest

from tests.tools.test_mindbody import gym  # noqa: F401  (the same Mindbody gym)

pytestmark = pytest.mark.django_db

DAY = datetime.timedelta(days=1)


def contract(gym, start, end, name="Mensual"):  # noqa: F811
    return gym.fake.add_contract(client_id=gym.client, name=name, start=start, end=end)


def test_a_contract_in_force_today_is_active(gym):  # noqa: F811
    contract(gym, gym.today - 30 * DAY, gym.today + 30 * DAY)
    result = gym.call("get_membership", {})
    assert result.status == "ok", result.payload
    membership = result.payload["membership"]
    assert (membership["plan"], membership["status"]) == ("Mensual", "active")
    assert membership["ends_on"] == (gym.today + 30 * DAY).isoformat()


@pytest.mark.parametrize(
    ("start", "end"),
    [(-60, -1), (1, 60)],
    ids=["ended", "not_started"],
)
def test_a_contract_not_in_force_is_no_membership(gym, start, end):  # noqa: F811
    contract(gym, gym.today + start * DAY, gym.today + end * DAY)
    gym.fake.add_client(client_id="900002", first_name="Otra")
    gym.fake.add_contract(  # another client's contract is never hers
        client_id="900002", start=gym.today - DAY, end=gym.today + DAY
    )
    result = gym.call("get_membership", {})
    assert result.status == "no_results", result.payload
    assert "membership" not in result.payload
    queried = {
        r["query"]["request.clientId"][0]
        for r in gym.fake.requests
        if r["path"].startswith("/client/")
    }
    assert queried == {gym.client}


def test_a_member_with_nothing_hears_no_results_as_built_in(gym):  # noqa: F811
    result = gym.call("get_membership", {})
    assert result.status == "no_results"
    assert gym.fake.count("GET", "/client/clientcontracts") == 1
    assert gym.fake.count("GET", "/client/activeclientmemberships") == 1


def test_a_suspended_contract_is_never_told_active(gym):  # noqa: F811
    sale = contract(gym, gym.today - 30 * DAY, gym.today + 30 * DAY)
    gym.fake.contracts[sale].autopay_status = "Suspended"
    result = gym.call("get_membership", {})
    assert result.status == "ok", result.payload
    assert result.payload["membership"]["status"] == "frozen"


def test_an_active_contract_is_told_before_a_suspended_one(gym):  # noqa: F811
    old = contract(gym, gym.today - 30 * DAY, gym.today + 30 * DAY, name="Antiguo")
    gym.fake.contracts[old].autopay_status = "Suspended"
    contract(gym, gym.today - DAY, gym.today + 60 * DAY, name="Nuevo")
    membership = gym.call("get_membership", {}).payload["membership"]
    assert (membership["plan"], membership["status"]) == ("Nuevo", "active")


def test_without_a_contract_a_current_membership_is_active(gym):  # noqa: F811
    contract(gym, gym.today - 60 * DAY, gym.today - DAY)  # ended
    gym.fake.add_membership(
        client_id=gym.client,
        name="Bono ilimitado",
        start=gym.today - DAY,
        end=gym.today + 10 * DAY,
    )
    membership = gym.call("get_membership", {}).payload["membership"]
    assert (membership["plan"], membership["status"]) == ("Bono ilimitado", "active")


def test_a_month_to_month_contract_is_active_with_no_end_date(gym):  # noqa: F811
    contract(gym, gym.today - 400 * DAY, None, name="Mes a mes")
    result = gym.call("get_membership", {})
    assert result.status == "ok", result.payload
    membership = result.payload["membership"]
    assert (membership["plan"], membership["status"]) == ("Mes a mes", "active")
    assert membership["starts_on"] == (gym.today - 400 * DAY).isoformat()
    assert membership["ends_on"] is None


@pytest.mark.parametrize(("start", "terminated"), [(1, None), (-60, 0)])
def test_a_month_to_month_contract_not_begun_or_terminated_is_none(
    gym,  # noqa: F811
    start,
    terminated,
):
    sale = contract(gym, gym.today + start * DAY, None)
    if terminated is not None:
        gym.fake.contracts[sale].terminated = gym.today + terminated * DAY
    result = gym.call("get_membership", {})
    assert result.status == "no_results", result.payload
