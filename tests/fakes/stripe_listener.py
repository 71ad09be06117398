"""The fake Stripe's listener: HTTP on 127.0.0.1 from background threads, which
tests can close for a while (connections refused, as when Stripe is unreachable)
and open again on the same port.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

import abc
import errno
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.fakes.stripe_wire import (
    Params,
    _new_id,
    _parse_int,
    _parse_params,
    _Request,
    _Response,
)

_HOST = "127.0.0.1"
_REDACTED = "<redacted>"
_FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"

# How hard a re-opened listener tries to get its old port back.
_BIND_ATTEMPTS = 50
_BIND_RETRY_SECONDS = 0.02


class LoopbackListener(abc.ABC):
    """Serves :meth:`_handle`'s answers over HTTP on 127.0.0.1, one thread per
    connection, after recording each request with :meth:`_record`.

    Connections are closed after every response (HTTP/1.0 style). That is on
    purpose: a client with a pooled keep-alive connection would otherwise keep
    talking to the old socket and never notice :meth:`refuse_for`.
    """

    #: The server class each listener serves with (its handler); and its
    #: threads' name.
    server_class: type[_Server]
    thread_name = "fake-stripe"

    def __init__(self) -> None:
        # Listener lifecycle, guarded by its own lock.
        self._life_lock = threading.RLock()
        self._server: _Server | None = None
        self._serve_thread: threading.Thread | None = None
        self._port: int | None = None
        self._started = False
        self._stopped = False
        self._generation = 0
        self._reopen_timer: threading.Timer | None = None
        self._refused_until: float | None = None
        self._reopen_error: OSError | None = None
        self._listening = threading.Event()

    def start(self) -> None:
        """Bind 127.0.0.1 on a port the OS picks and serve from a daemon thread."""
        with self._life_lock:
            if self._started:
                raise RuntimeError("the fake was already started")
            self._started = True
            self._open_server(0)

    def stop(self) -> None:
        """Stop serving for good and release the port; calling it twice is fine.

        If a listener could not be re-opened after :meth:`refuse_for`, the error is
        raised here so that it does not go unnoticed.
        """
        with self._life_lock:
            if self._stopped:
                return
            self._stopped = True
            self._cancel_reopen()
            self._close_server()
            self._refused_until = None
            error = self._reopen_error
        if error is not None:
            raise RuntimeError(
                f"the fake could not listen again on port {self._port}"
            ) from error

    @property
    def port(self) -> int:
        """The TCP port chosen at :meth:`start`; it stays the same until stop."""
        if self._port is None:
            raise RuntimeError("the fake is not started")
        return self._port

    @property
    def base_url(self) -> str:
        """The root URL to configure as Stripe's API base, without a slash."""
        return f"http://{_HOST}:{self.port}"

    def refuse_for(self, seconds: float) -> None:
        """Close the listener now and open it again on the same port later.

        While closed, nothing listens on the port, so the OS refuses new TCP
        connections (ECONNREFUSED): what a client sees when Stripe is unreachable,
        which an HTTP error cannot imitate. Requests already being answered are
        finished. Data is kept. Calling it again while refused restarts the wait.
        """
        if seconds < 0:
            raise ValueError("seconds must not be negative")
        with self._life_lock:
            if not self._started or self._stopped:
                raise RuntimeError("the fake is not running")
            self._cancel_reopen()
            self._close_server()
            self._generation += 1
            self._refused_until = time.monotonic() + seconds
            timer = threading.Timer(seconds, self._reopen, args=(self._generation,))
            timer.name = "fake-stripe-reopen"
            timer.daemon = True
            self._reopen_timer = timer
            timer.start()

    def listen_again(self) -> None:
        """End a refusal now: open the listener on the same port before returning."""
        with self._life_lock:
            if self._refused_until is None:
                return
            self._cancel_reopen()
            self._generation += 1
            self._open_server(self.port)
            self._refused_until = None

    @property
    def refuse_connections_for(self) -> float:
        """Seconds left before the listener comes back; 0.0 while listening.

        Assigning to it is the same as calling :meth:`refuse_for`.
        """
        with self._life_lock:
            if self._refused_until is None:
                return 0.0
            return max(0.0, self._refused_until - time.monotonic())

    @refuse_connections_for.setter
    def refuse_connections_for(self, seconds: float) -> None:
        self.refuse_for(seconds)

    def wait_listening(self, timeout: float = 5.0) -> bool:
        """Block until the listener is open (e.g. after :meth:`refuse_for`).

        Lets a test wait for recovery without guessing a sleep. Returns whether
        the listener is open.
        """
        return self._listening.wait(timeout)

    def _open_server(self, port: int) -> None:
        """Bind a new listener on ``port`` (0: any) and start its serving thread.

        Binding is retried briefly: SO_REUSEADDR lets the port be taken back
        despite connections in TIME_WAIT, but another socket may hold it for a
        moment.
        """
        last_error: OSError | None = None
        for attempt in range(_BIND_ATTEMPTS):
            try:
                server = self.server_class((_HOST, port), self)
                break
            except OSError as exc:
                if exc.errno not in (errno.EADDRINUSE, errno.EACCES) or port == 0:
                    raise
                last_error = exc
                if attempt + 1 < _BIND_ATTEMPTS:
                    time.sleep(_BIND_RETRY_SECONDS)
        else:
            assert last_error is not None
            raise last_error
        self._server = server
        self._port = server.server_address[1]
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{self.thread_name}-{self._port}",
            daemon=True,
        )
        self._serve_thread = thread
        thread.start()
        self._listening.set()

    def _close_server(self) -> None:
        """Stop the serving loop and close the listening socket, if there is one."""
        server, thread = self._server, self._serve_thread
        self._server = None
        self._serve_thread = None
        self._listening.clear()
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def _cancel_reopen(self) -> None:
        """Call off a pending re-open scheduled by :meth:`refuse_for`."""
        if self._reopen_timer is not None:
            self._reopen_timer.cancel()
            self._reopen_timer = None

    def _reopen(self, generation: int) -> None:
        """Timer callback: listen again unless stopped or superseded meanwhile."""
        with self._life_lock:
            if self._stopped or generation != self._generation:
                return
            self._reopen_timer = None
            try:
                self._open_server(self.port)
            except OSError as exc:
                # Kept for stop() to raise: an exception in this thread would only
                # be printed, and tests would just see refusals forever.
                self._reopen_error = exc
                return
            self._refused_until = None


class RecordingListener(LoopbackListener):
    """A :class:`LoopbackListener` whose requests :class:`_Handler` reads:
    each recorded with :meth:`_record`, then answered by :meth:`_handle`."""

    @abc.abstractmethod
    def _record(self, entry: dict[str, Any]) -> None:
        """Keep one request as it arrived (the authorization redacted)."""

    @abc.abstractmethod
    def _handle(self, request: _Request) -> _Response:
        """The answer to one request."""


class _Server(ThreadingHTTPServer):
    """The listening socket, with one daemon thread per connection.

    ``block_on_close`` is off so that closing the listener (for
    :meth:`LoopbackListener.refuse_for` or stop) never waits for a handler that is
    sleeping through ``delay_after_refund``.
    """

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], fake: LoopbackListener) -> None:
        self.fake = fake
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse DNS lookup, which can be slow."""
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hung up (e.g. after its read timeout)."""
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """Turns one HTTP request into a :class:`_Request` and writes the answer."""

    server: _Server
    # One request per connection, see LoopbackListener's docstring.
    protocol_version = "HTTP/1.0"
    # A client that connects and sends nothing does not hold a thread forever.
    timeout = 10

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def version_string(self) -> str:
        return "nginx"

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request log lines BaseHTTPRequestHandler prints."""

    def _dispatch(self) -> None:
        """Read, record, handle and answer one request."""
        fake = self.server.fake
        assert isinstance(fake, RecordingListener)
        split = urlsplit(self.path)
        query = _parse_params(split.query)
        body = self._read_body()
        media_type = self.headers.get("Content-Type", "").split(";")[0]
        form: Params = {}
        if media_type.strip().lower() == _FORM_MEDIA_TYPE:
            form = _parse_params(body.decode("utf-8", errors="replace"))
        headers = {name.lower(): value for name, value in self.headers.items()}
        if "authorization" in headers:
            headers["authorization"] = _REDACTED
        fake._record(
            {
                "method": self.command,
                "path": split.path,
                "query": query,
                "form": form,
                "headers": headers,
            }
        )
        idempotency_key = self.headers.get("Idempotency-Key")
        response = fake._handle(
            _Request(
                method=self.command,
                path=split.path,
                query=query,
                form=form,
                authorization=self.headers.get("Authorization"),
                idempotency_key=idempotency_key,
            )
        )
        if response.delay > 0:
            time.sleep(response.delay)
        extra = dict(response.headers)
        if idempotency_key is not None and self.command == "POST":
            extra["Idempotency-Key"] = idempotency_key
        self._send(response, extra)

    def _read_body(self) -> bytes:
        """The request body, from Content-Length or chunked transfer encoding."""
        encoding = self.headers.get("Transfer-Encoding", "")
        if "chunked" in encoding.lower():
            chunks: list[bytes] = []
            while True:
                size_line = self.rfile.readline(65537).split(b";")[0].strip()
                size = int(size_line or b"0", 16)
                if size == 0:
                    # Skip trailers up to the empty line that ends the body.
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
        length = _parse_int(self.headers.get("Content-Length", "0").strip())
        if not length or length < 0:
            return b""
        return self.rfile.read(length)

    def _send(self, response: _Response, extra: dict[str, str]) -> None:
        """Write status, headers and body; a client that left is not an error."""
        try:
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(response.body)))
            self.send_header("Request-Id", _new_id("req"))
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(response.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True


LoopbackListener.server_class = _Server
