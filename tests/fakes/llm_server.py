"""A local stand-in for the three LLM APIs the provider adapters talk to.

Why: the adapters must be tested through the real SDK clients (their request
building, SSE parsing, error classes and timeouts) without reaching the internet.
This module serves the minimal wire formats those SDKs accept, on loopback, from a
background thread:

- OpenAI Responses: ``POST /v1/responses`` (JSON, or SSE when ``"stream": true``);
- Anthropic Messages: ``POST /v1/messages`` (JSON, or SSE with ``event:`` lines);
- Gemini: ``POST /{version}/models/{model}:generateContent`` and
  ``:streamGenerateContent?alt=sse``.

What: a test scripts each provider's answers as :class:`Step` values (text, tool
calls, a fault or an HTTP error status) or as a function of the request body, and
reads back every request the fake received, with credentials redacted, and the
usage each answer reported (``billed``). Each API's prompt cache works as the
real one does (``llm_cache``).

Each API's wire format, and what it refuses, is in its own module
(``llm_openai``, ``llm_anthropic``, ``llm_google``); the scripted steps in
``llm_steps``. Only the standard library is used so the fake adds no dependency to
the suite.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from tests.fakes import llm_anthropic, llm_google, llm_openai
from tests.fakes.llm_cache import AnthropicCache, GeminiCache, OpenAICache
from tests.fakes.llm_steps import (
    PROVIDERS,
    Provider,
    RecordedRequest,
    Reply,
    Script,
    Step,
)
from tests.fakes.llm_usage import Counts, counted

__all__ = [
    "PROVIDERS",
    "FakeLLM",
    "RecordedRequest",
    "Step",
    "running_fake_llm",
]

_HOST = "127.0.0.1"
_REDACTED = "<redacted>"
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})
#: Each API's fake: ``refusal(body)``, ``reply(step, body, number, path)`` and
#: ``error_body(status)``.
_WIRES: dict[Provider, ModuleType] = {
    "openai": llm_openai,
    "anthropic": llm_anthropic,
    "google": llm_google,
}


class FakeLLM:
    """An HTTP server on loopback that answers as OpenAI, Anthropic and Gemini.

    ``script(provider, steps)`` queues answers (consumed in order); a callable
    instead answers every request from its parsed body. A request with nothing
    scripted gets an HTTP 500 in that provider's error format. ``requests``
    holds what each provider received, ``billed`` the usage of each answer.
    ``prompt_cache(provider, False)`` makes an API that caches nothing. All of
    it is safe to use from any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: dict[str, deque[Step]] = {p: deque() for p in PROVIDERS}
        self._scripts: dict[str, Script | None] = dict.fromkeys(PROVIDERS)
        self._requests: dict[str, list[RecordedRequest]] = {p: [] for p in PROVIDERS}
        self._billed: dict[str, list[Counts]] = {p: [] for p in PROVIDERS}
        self._caches_new()
        self._counter = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> None:
        """Listen on a free port of 127.0.0.1 and serve from a daemon thread."""
        if self._server is not None:
            return
        fake = self

        class Handler(_Handler):
            owner = fake

        server = ThreadingHTTPServer((_HOST, 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-llm",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``; OpenAI clients need this plus ``/v1``."""
        if self._server is None:
            raise RuntimeError("the fake LLM server is not running")
        return f"http://{_HOST}:{self._server.server_address[1]}"

    # scripting

    def script(self, provider: str, steps: list[Step] | Script) -> None:
        """Queue ``steps`` for ``provider``, or answer it with a function of the
        request body from now on."""
        if provider not in PROVIDERS:
            raise ValueError(f"unknown provider {provider!r}")
        with self._lock:
            if callable(steps):
                self._scripts[provider] = steps
            else:
                self._scripts[provider] = None
                self._steps[provider].extend(steps)

    def reset(self) -> None:
        """Forget every script, every recorded request and what the caches hold
        (they cache again)."""
        with self._lock:
            for provider in PROVIDERS:
                self._steps[provider].clear()
                self._scripts[provider] = None
                self._requests[provider].clear()
                self._billed[provider].clear()
            self._caches_new()

    def _caches_new(self) -> None:
        self._openai_cache = OpenAICache()
        self._anthropic_cache = AnthropicCache()
        self._gemini_cache = GeminiCache()

    def prompt_cache(self, provider: Provider, enabled: bool) -> None:
        """Whether ``provider``'s API caches prompts (it does unless told not)."""
        with self._lock:
            self._cache(provider).enabled = enabled

    def _cache(self, provider: Provider) -> Any:
        return {
            "openai": self._openai_cache,
            "anthropic": self._anthropic_cache,
            "google": self._gemini_cache,
        }[provider]

    @property
    def billed(self) -> dict[str, list[Counts]]:
        """The usage each answer with a step reported, per provider, in order."""
        with self._lock:
            return {p: list(counts) for p, counts in self._billed.items()}

    @property
    def requests(self) -> dict[str, list[RecordedRequest]]:
        """A snapshot of the requests received so far, per provider."""
        with self._lock:
            return {p: list(records) for p, records in self._requests.items()}

    # request handling (called from handler threads)

    def _answer(self, provider: Provider, record: RecordedRequest) -> Reply:
        wire = _WIRES[provider]
        refused = wire.refusal(record.body)
        if refused is not None:
            # As the real APIs do: the request is refused and no step is used.
            with self._lock:
                self._requests[provider].append(record)
            return _refusal(provider, refused)
        with self._lock:
            self._requests[provider].append(record)
            self._counter += 1
            number = self._counter
            script = self._scripts[provider]
            queued = self._steps[provider]
            step = queued.popleft() if script is None and queued else None
        if script is not None:
            step = script(record.body)
        if step is None:
            return _error_reply(provider, 500, Step())
        if step.status is not None:
            return _error_reply(provider, step.status, step)
        shape = replace(step, fault="cut") if step.fault == "stall" else step
        counts = self._counted(provider, record, step)
        reply: Reply = wire.reply(shape, record.body, number, record.path, counts)
        reply.headers.update(step.headers or {})
        if step.fault == "stall" and reply.frames is not None:
            reply.stall = step.delay
        else:
            reply.delay = step.delay
        return reply

    def _counted(
        self, provider: Provider, record: RecordedRequest, step: Step
    ) -> Counts:
        """The answer's usage, the request read through the API's prompt cache."""
        with self._lock:
            if provider == "google":
                match = llm_google.PATH.match(urlsplit(record.path).path)
                model = match["model"] if match else ""
                cache = self._gemini_cache.read(record.body, model)
            else:
                cache = self._cache(provider).read(record.body)
            counts = counted(record.body, step, cache)
            self._billed[provider].append(counts)
        return counts


def _refusal(provider: Provider, message: str) -> Reply:
    """A 400 answer carrying ``message`` in the provider's error shape."""
    body = _WIRES[provider].error_body(400)
    body["error"]["message"] = message
    return Reply(400, body=body)


def _error_reply(provider: Provider, status: int, step: Step) -> Reply:
    body = _WIRES[provider].error_body(status)
    return Reply(status, body=body, headers=dict(step.headers or {}), delay=step.delay)


class _Handler(BaseHTTPRequestHandler):
    """Routes a POST to its provider and writes the scripted reply."""

    owner: FakeLLM

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: test output is not the place for access logs."""

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        provider: Provider
        if path == "/v1/responses":
            provider = "openai"
        elif path == "/v1/messages":
            provider = "anthropic"
        elif llm_google.PATH.match(path):
            provider = "google"
        else:
            self._write(Reply(404, body={"error": {"message": "no such route"}}))
            return
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        headers = {
            key.lower(): (_REDACTED if key.lower() in _SECRET_HEADERS else value)
            for key, value in self.headers.items()
        }
        record = RecordedRequest(path=self.path, headers=headers, body=body, raw=raw)
        self._write(self.owner._answer(provider, record))

    def _write(self, reply: Reply) -> None:
        if reply.delay:
            time.sleep(reply.delay)
        try:
            self.send_response(reply.status)
            for key, value in reply.headers.items():
                self.send_header(key, value)
            if reply.frames is None:
                data = json.dumps(reply.body or {}).encode("utf-8")
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            else:
                # HTTP/1.0 without a length: closing the connection ends the body.
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for frame in reply.frames:
                    self.wfile.write(frame.encode("utf-8"))
                    self.wfile.flush()
                if reply.stall:
                    time.sleep(reply.stall)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (a timeout test); nothing left to tell it.
            pass


def in_process_transport(fake: FakeLLM, provider: Provider) -> Any:
    """An ``httpx2.MockTransport`` answering as ``fake`` would, with no socket, for
    benchmarks that measure the client side alone. Delays are not applied."""
    import httpx2

    def handle(request: Any) -> Any:
        body = json.loads(request.content or b"{}")
        record = RecordedRequest(
            path=str(request.url.raw_path, "ascii"),
            headers={},
            body=body,
            raw=request.content,
        )
        reply = fake._answer(provider, record)
        if reply.frames is not None:
            return httpx2.Response(
                reply.status,
                headers={"content-type": "text/event-stream", **reply.headers},
                content="".join(reply.frames).encode(),
            )
        return httpx2.Response(reply.status, headers=reply.headers, json=reply.body)

    return httpx2.MockTransport(handle)


class TimedInProcessClient:
    """An ``httpx2.AsyncClient`` (``client``) that ``fake`` answers in this process,
    keeping the seconds of the fake's own work (``seconds``) so that a benchmark can
    leave them out."""

    def __init__(self, fake: FakeLLM, provider: Provider) -> None:
        import httpx2

        self._handle = in_process_transport(fake, provider).handler
        self.seconds = 0.0
        self.client = httpx2.AsyncClient(transport=httpx2.MockTransport(self._timed))

    def _timed(self, request: Any) -> Any:
        started = time.perf_counter()
        try:
            return self._handle(request)
        finally:
            self.seconds += time.perf_counter() - started


@contextmanager
def running_fake_llm() -> Iterator[FakeLLM]:
    """A started :class:`FakeLLM`, stopped on exit."""
    fake = FakeLLM()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()
