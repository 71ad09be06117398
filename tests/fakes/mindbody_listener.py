"""The fake Mindbody's listener: the fake Stripe's loopback listener (threads,
one request per connection, refusals for a while) with Mindbody's JSON bodies,
its headers, and responses that can be lost on purpose.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

import json
import time
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.fakes.mindbody_wire import Query, Request, Response
from tests.fakes.stripe_listener import (
    _HOST,
    LoopbackListener,
    RecordingListener,
    _Handler,
    _Server,
)

API_PREFIX = "/public/v6"


class MindbodyListener(RecordingListener):
    """:class:`RecordingListener` serving Mindbody's wire format under
    ``/public/v6``. Subclasses give ``_handle`` a :class:`Request` and return a
    :class:`Response`."""

    @property
    def base_url(self) -> str:
        """The API base to configure, as Mindbody's own: ``.../public/v6``."""
        return f"http://{_HOST}:{self.port}{API_PREFIX}"

    thread_name = "fake-mindbody"


class _MindbodyServer(_Server):
    """The fake Stripe's server class, answering with :class:`_MindbodyHandler`."""

    def __init__(self, address: tuple[str, int], fake: LoopbackListener) -> None:
        self.fake = fake
        ThreadingHTTPServer.__init__(self, address, _MindbodyHandler)


def _parse_query(text: str) -> Query:
    """Query parameters, every name mapped to the list of its values."""
    query: Query = {}
    for key, value in parse_qsl(text, keep_blank_values=True):
        query.setdefault(key, []).append(value)
    return query


def _decode_body(raw: bytes, content_type: str) -> tuple[Any, str | None]:
    """The JSON body and None, or None and why it could not be read."""
    if not raw:
        return None, None
    media_type = content_type.split(";")[0].strip().lower()
    if media_type not in ("application/json", "text/json"):
        return None, f"The request body must be JSON, not '{media_type}'."
    try:
        return json.loads(raw.decode("utf-8")), None
    except (UnicodeDecodeError, ValueError):
        return None, "The request body is not valid JSON."


class _MindbodyHandler(_Handler):
    """Turns one HTTP request into a :class:`Request` and writes the answer."""

    def version_string(self) -> str:
        return "Microsoft-IIS/10.0"

    def _dispatch(self) -> None:
        """Read, record, handle and answer one request."""
        fake = self.server.fake
        assert isinstance(fake, RecordingListener)
        split = urlsplit(self.path)
        raw = self._read_body()
        body, body_error = _decode_body(raw, self.headers.get("Content-Type", ""))
        path = split.path
        if path.startswith(API_PREFIX + "/"):
            path = path[len(API_PREFIX) :]
        else:
            path = "!" + path  # outside the API: no route matches it
        request = Request(
            method=self.command,
            path=path,
            query=_parse_query(split.query),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
            body_error=body_error,
        )
        entry: dict[str, Any] = {
            "method": request.method,
            "path": request.path,
            "query": request.query,
            "headers": dict(request.headers),
            "json": request.body,
            "status": None,
        }
        fake._record(entry)
        response = fake._handle(request)
        # None stays for a response lost on purpose.
        entry["status"] = None if response.lost else response.status
        if response.delay > 0:
            time.sleep(response.delay)
        if response.lost:
            # Nothing is written: the client sees the connection closed with no
            # status line, as when a response is lost on the way back.
            self.close_connection = True
            return
        self._write(response)

    def _write(self, response: Response) -> None:
        """Status, headers and body; a client that left is not an error."""
        try:
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(response.body)))
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(response.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True


MindbodyListener.server_class = _MindbodyServer
