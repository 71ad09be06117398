"""The app under uvicorn in this process (a thread), on the test database, with
the options ``manage.py serve`` gives it that a test names."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn
from django.core.asgi import get_asgi_application


@contextlib.contextmanager
def uvicorn_running(**options: Any) -> Iterator[str]:
    """Serve the app until the block ends; yields its address."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = uvicorn.Config(
        get_asgi_application(),
        host="127.0.0.1",
        port=port,
        lifespan="off",
        log_level="warning",
        **options,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn is down"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
