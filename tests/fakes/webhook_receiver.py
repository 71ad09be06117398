"""A gym's webhook receiver on loopback: it answers from a script of status
codes and records every request as it arrived (raw body and headers), and
every connection made to it, so a test can prove that nothing reached it.

Only the standard library is used.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class WebhookReceiver:
    """What the receiver answers (``statuses`` in turn, the last one ever
    after) and what it got."""

    port: int = 0
    statuses: list[int] = field(default_factory=lambda: [200])
    requests: list[Received] = field(default_factory=list)
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/T0001/B0002/s3cr3tPathPart"

    def answer(self, received: Received) -> int:
        with self.lock:
            self.requests.append(received)
            index = min(len(self.requests), len(self.statuses)) - 1
            return self.statuses[index]

    def connected(self) -> None:
        with self.lock:
            self.connections += 1


def signature_valid(header: str, body: bytes, secret: str) -> bool:
    """Check a ``Gymnasia-Signature`` the way a receiver's documentation would
    tell it to: HMAC-SHA256 of ``"<t>.<raw body>"`` with the shared secret."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    signed = parts["t"].encode() + b"." + body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


@contextmanager
def running_receiver(*statuses: int) -> Iterator[WebhookReceiver]:
    """A receiver on 127.0.0.1 answering ``statuses`` in turn (200 by default)."""
    receiver = WebhookReceiver(statuses=list(statuses) or [200])

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            status = receiver.answer(
                Received(self.path, dict(self.headers.items()), body)
            )
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"the receiver's own words, never stored")

        def log_message(self, format: str, *args: object) -> None:
            pass

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def get_request(self) -> tuple[socket.socket, object]:
            accepted = super().get_request()
            receiver.connected()
            return accepted

    server = Server(("127.0.0.1", 0), Handler)
    receiver.port = server.server_port
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
