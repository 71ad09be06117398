"""The fake Graph API's listener: the fake Stripe's :class:`LoopbackListener`
(127.0.0.1, one thread per connection, refusals for a while) with a handler that
reads JSON bodies, answers with Graph's headers, and can drop a connection
without an answer (the request was handled, the reply is lost).

Only the standard library is used.
"""

from __future__ import annotations

import abc
import json
import socket
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.fakes.stripe_listener import (
    _REDACTED,
    LoopbackListener,
    _Handler,
    _Server,
)
from tests.fakes.stripe_wire import Params, _parse_params
from tests.fakes.whatsapp_wire import (
    INVALID_PARAMETER,
    ErrorKind,
    fbtrace_id,
    whatsapp_error,
)


@dataclass
class GraphRequest:
    """One request as the fake's logic sees it."""

    method: str
    path: str
    query: Params
    headers: dict[str, str]
    body: bytes
    authorization: str | None


@dataclass
class GraphResponse:
    """Status and JSON body; ``delay`` is slept outside every lock, ``drop``
    closes the connection without writing anything."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False


class Refusal(Exception):
    """A request answered with an error (raised inside validation)."""

    def __init__(self, response: GraphResponse) -> None:
        super().__init__(response.status)
        self.response = response


def json_response(
    status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> GraphResponse:
    body = json.dumps(payload).encode("utf-8")
    return GraphResponse(status, body, dict(headers or {}))


def refuse(kind: ErrorKind, details: str | None = None) -> Refusal:
    return Refusal(json_response(kind.http_status, whatsapp_error(kind, details)))


def invalid(details: str) -> Refusal:
    return refuse(INVALID_PARAMETER, details)


class GraphListener(LoopbackListener):
    """A :class:`LoopbackListener` whose requests go to :meth:`_answer`."""

    @abc.abstractmethod
    def _answer(self, request: GraphRequest) -> GraphResponse:
        """Record and answer one request."""

    thread_name = "fake-graph"


class _GraphServer(_Server):
    """The Stripe listener's server class, serving :class:`_GraphHandler`, with
    room for a burst of connections (a benchmark's replies) in its backlog."""

    request_queue_size = 256

    def __init__(self, address: tuple[str, int], fake: LoopbackListener) -> None:
        self.fake = fake
        ThreadingHTTPServer.__init__(self, address, _GraphHandler)


class _GraphHandler(_Handler):
    """Reads one request (body included) and writes the fake's answer."""

    def version_string(self) -> str:
        return "proxygen-bolt"

    def _dispatch(self) -> None:
        fake = self.server.fake
        assert isinstance(fake, GraphListener)
        split = urlsplit(self.path)
        body = self._read_body()
        headers = {name.lower(): value for name, value in self.headers.items()}
        authorization = headers.get("authorization")
        if authorization is not None:
            headers["authorization"] = _REDACTED
        request = GraphRequest(
            method=self.command,
            path=split.path,
            query=_parse_params(split.query),
            headers=headers,
            body=body,
            authorization=authorization,
        )
        response = fake._answer(request)
        if response.delay > 0:
            time.sleep(response.delay)
        if response.drop:
            self._drop()
            return
        self._write(response)

    def _drop(self) -> None:
        """Close the connection with nothing written: the reply is lost."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _write(self, response: GraphResponse) -> None:
        """Status, Graph's headers and the JSON body; a client that left is fine."""
        try:
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("x-fb-trace-id", fbtrace_id())
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(response.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True


GraphListener.server_class = _GraphServer
