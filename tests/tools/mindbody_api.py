"""What the fake Mindbody's own tests share: an httpx client with the site's
key and id (and a staff token once signed in), and the fake started."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx

from tests.fakes.mindbody_server import MindbodyFake, running_mindbody

ADD = "/class/addclienttoclass"
REMOVE = "/class/removeclientfromclass"


class Api:
    """An httpx client with the site's key and id, and a staff token once
    :meth:`login` ran."""

    def __init__(self, fake: MindbodyFake) -> None:
        self.fake = fake
        self.http = httpx.Client(
            base_url=fake.base_url,
            headers={"Api-Key": fake.api_key, "SiteId": fake.site_id},
            timeout=5.0,
        )

    def login(self) -> str:
        answer = self.http.post(
            "/usertoken/issue",
            json={
                "Username": self.fake.staff_username,
                "Password": self.fake.staff_password,
            },
        )
        assert answer.status_code == 200, answer.text
        token = answer.json()["AccessToken"]
        self.http.headers["Authorization"] = token
        return token

    def get(self, path: str, **params) -> httpx.Response:
        return self.http.get(path, params=params)

    def post(self, path: str, body: dict) -> httpx.Response:
        return self.http.post(path, json=body)


def fake_running() -> Iterator[MindbodyFake]:
    """A started fake Mindbody site (a module's ``fake`` fixture)."""
    with running_mindbody() as started:
        yield started


def api_signed_in(fake: MindbodyFake) -> Iterator[Api]:
    """A client of the fake with a staff token (a module's ``api`` fixture)."""
    client = Api(fake)
    client.login()
    yield client
    client.http.close()


def soon(hours: int = 2) -> datetime:
    return (datetime.now(UTC) + timedelta(hours=hours)).replace(second=0, microsecond=0)


def code_of(answer: httpx.Response) -> tuple[int, str]:
    return answer.status_code, answer.json()["Error"]["Code"]
