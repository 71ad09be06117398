"""A real SMTP server on loopback (aiosmtpd) that keeps what it receives, for
the tests of staff's mails and the notification benchmark."""

from __future__ import annotations

import email
import email.policy
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Received:
    """A mail as the server accepted it, and when."""

    to: list[str]
    message: EmailMessage
    at: float

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    def part(self, kind: str) -> str:
        """The text of the ``text/plain`` or ``text/html`` part."""
        body = self.message.get_body(preferencelist=(kind.split("/")[1],))
        assert body is not None and body.get_content_type() == kind
        return str(body.get_content())


@dataclass
class Inbox:
    """What the server received, in order; safe to read while it receives."""

    mails: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(
            envelope.content, policy=email.policy.default
        )
        with self.lock:
            self.mails.append(
                Received(list(envelope.rcpt_tos), message, time.monotonic())
            )  # type: ignore[arg-type]
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[Received]:
        with self.lock:
            return [mail for mail in self.mails if address in mail.to]

    def wait(self, count: int, seconds: float = 30.0) -> list[Received]:
        """The first ``count`` mails, once they have arrived."""
        deadline = time.monotonic() + seconds
        while True:
            with self.lock:
                if len(self.mails) >= count:
                    return list(self.mails)
            assert time.monotonic() < deadline, (
                f"{len(self.mails)} of {count} mails came"
            )
            time.sleep(0.05)


@contextmanager
def smtp_server() -> Iterator[tuple[int, Inbox]]:
    """An SMTP server on a free loopback port: yields the port and its inbox."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    logging.getLogger("mail.log").setLevel(logging.WARNING)  # a line per command
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield port, inbox
    finally:
        controller.stop()
