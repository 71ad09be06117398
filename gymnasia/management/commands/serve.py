"""``manage.py serve``: the web server and a Celery worker together.

This is how the embedded default runs: uvicorn serves the ASGI app in this process
and a Celery worker (with its beat scheduler) runs beside it as a child process;
stopping one stops both. ``--workers N`` serves from N processes (one per core uses
the whole machine); they share rate-limit counters only through Redis, so more than
one needs ``REDIS_URL``.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
from typing import Any

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Serve the web app with uvicorn and run a Celery worker beside it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--workers",
            type=int,
            default=1,
            help="Web processes (default 1; more need REDIS_URL).",
        )
        parser.add_argument(
            "--no-worker", action="store_true", help="Serve the web app only."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        workers = options["workers"]
        if workers < 1:
            raise CommandError("--workers must be 1 or more.")
        if workers > 1 and not settings.REDIS_URL:
            raise CommandError(
                "Several web processes share their rate limits through Redis: "
                "set REDIS_URL, or serve with --workers 1."
            )
        port_taken(options["host"], options["port"])
        settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
        worker = None
        base = f"http://{shown_host(options['host'])}:{options['port']}"
        # Links in staff's mails point at the address printed below, where staff
        # sign in, unless the operator said where Gymnasia is reached (SITE_URL):
        # another host name would be another site to the browser, signed out.
        if not os.environ.get("SITE_URL"):
            os.environ["SITE_URL"] = settings.SITE_URL = base
        env = dict(os.environ)
        if not options["no_worker"]:
            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "gymnasia",
                    "worker",
                    "--beat",
                    "--pool=solo",
                    "--loglevel=INFO",
                ],
                env=env,
            )
        self.stdout.write(
            f"Gymnasia at {base}/  (admin: {base}/admin/, staff inbox: {base}/inbox/, "
            f"conversation API: {base}/api/v1/conversations)"
        )
        self.stdout.write(f"Mails to staff: {_mail_destination()}")
        if settings.DEMO_SITE:
            self.stdout.write(
                f"Demo gym site with the chat widget: "
                f"http://localhost:{options['port']}/demo/  (as a signed-in member: "
                f"http://localhost:{options['port']}/demo/?member=socio-1001)"
            )
        # uvicorn shuts down gracefully on SIGTERM, then raises the signal again;
        # handled here, it ends this command through the ``finally`` below, so the
        # worker stops too instead of being left behind.
        signal.signal(signal.SIGTERM, _exit_on_signal)
        try:
            uvicorn.run(
                "gymnasia.asgi:application",
                host=options["host"],
                port=options["port"],
                log_level="info",
                lifespan="off",
                workers=workers,
                # X-Forwarded-* only from the proxies listed (none by default).
                proxy_headers=bool(settings.FORWARDED_ALLOW_IPS),
                forwarded_allow_ips=settings.FORWARDED_ALLOW_IPS or None,
            )
        finally:
            if worker is not None and worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                try:
                    worker.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    worker.kill()


def port_taken(host: str, port: int) -> None:
    """Refuse to start, saying how to choose another port, when ``port`` is taken
    (before anything is printed or started)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as taken:
            if taken.errno != errno.EADDRINUSE:
                raise
            raise CommandError(
                f"Port {port} is taken: another program answers on it. "
                f"Choose another port: make run PORT={port + 1} "
                f"(or manage.py serve --port {port + 1})."
            ) from None


def shown_host(host: str) -> str:
    """The host a browser uses for ``host``: a server listening everywhere is
    reached on loopback from this machine."""
    everywhere = {"0.0.0.0", "::", ""}  # noqa: S104 (compared, not bound)
    return "127.0.0.1" if host in everywhere else host


def _mail_destination() -> str:
    if settings.EMAIL_BACKEND.endswith("filebased.EmailBackend"):
        return f"written as files in {settings.EMAIL_FILE_PATH}"
    return f"sent through {settings.EMAIL_HOST}:{settings.EMAIL_PORT}"


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
