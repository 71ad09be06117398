"""What the WhatsApp tests share: the demo agent's channel connected to a fake
Graph API, deliveries posted to the real webhook, and the turns they enqueue."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agents.models import Agent, WhatsAppChannel
from agents.whatsapp.services import whatsapp_channel_connect, whatsapp_webhook_path
from gymnasia.gyms.models import Member
from tests.fakes.whatsapp_graph import GraphFake, running_graph_fake

#: The demo member Lucía's number, as WhatsApp reports it (``wa_id``).
LUCIA = "34600111222"
STRANGER = "34699000111"


def graph_running() -> Iterator[GraphFake]:
    """A fake Graph API the settings allow (a module's ``graph`` fixture)."""
    with running_graph_fake() as fake:
        yield fake


def connect(agent: Agent, fake: GraphFake, **options: Any) -> WhatsAppChannel:
    """The agent's channel on the fake's number, and Lucía's phone on her record."""
    channel = whatsapp_channel_connect(
        agent=agent,
        phone_number_id=fake.phone_number_id,
        business_account_id=fake.waba_id,
        access_token=fake.access_token,
        app_secret=fake.app_secret,
        verify_token=fake.verify_token,
        api_base=fake.base_url,
    )
    for key, value in options.items():
        setattr(channel, key, value)
    channel.save()
    member = Member.objects.get(external_id="socio-1001")
    member.phone = "+34 600 11 12 22"
    member.save()
    return channel


def post(client: Any, agent: Agent, webhook: tuple[bytes, dict[str, str]]) -> Any:
    """Post a delivery (body and headers as Meta sends them) to the webhook."""
    body, headers = webhook
    return client.post(
        whatsapp_webhook_path(agent.whatsapp),
        body,
        content_type="application/json",
        headers={k: v for k, v in headers.items() if k.lower() != "content-type"},
    )


class Turns:
    """The turns the webhook enqueued (``agents.tasks.whatsapp_turn.delay``),
    run by calling the task's function, as a worker would."""

    def __init__(self, monkeypatch: Any, capture: Any) -> None:
        self.queued: list[int] = []
        self._capture = capture
        monkeypatch.setattr(
            "agents.tasks.whatsapp_turn.delay", lambda i: self.queued.append(i)
        )
        monkeypatch.setattr(
            "agents.tasks.whatsapp_deliver_messages.delay",
            lambda ids, asked="": self.delivered.append((ids, asked)),
        )
        self.delivered: list[tuple[list[int], str]] = []

    def post(self, client: Any, agent: Agent, webhook: Any) -> Any:
        """Post a delivery; its commit's callbacks run (enqueueing its turns)."""
        with self._capture(execute=True):
            return post(client, agent, webhook)

    def run(self) -> list[str]:
        """Run every queued turn, oldest first."""
        from agents.tasks import whatsapp_turn

        done = []
        while self.queued:
            done.append(whatsapp_turn(self.queued.pop(0)))
        return done

    def send_delivered(self) -> None:
        """Run the sends queued after a commit (what staff decided)."""
        from agents.tasks import whatsapp_deliver_messages

        while self.delivered:
            whatsapp_deliver_messages(*self.delivered.pop(0))
