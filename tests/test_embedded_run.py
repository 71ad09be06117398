"""The embedded default, as ``make run`` starts it: SQLite, a broker needing no
server, the web server and a Celery worker from one command."""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.own_redis import OwnRedis

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def embedded_app_running(
    directory: Path,
    *,
    extra_env: dict[str, str] | None = None,
    seed_args: tuple[str, ...] = (),
    serve_args: tuple[str, ...] = (),
    worker: bool = True,
) -> Iterator[tuple[str, str, Path]]:
    """The app as ``make run`` starts it, with its data in ``directory``: yields its
    address, what ``seed_demo`` printed, and the server's log file."""
    env = {**embedded_env(directory), **(extra_env or {})}
    manage = [sys.executable, "manage.py"]
    subprocess.run(
        [*manage, "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    port = free_port()
    seeded = subprocess.run(
        [*manage, "seed_demo", "--site-origin", f"http://localhost:{port}", *seed_args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    log_path = directory / "serve.log"
    log = log_path.open("w+")
    process = subprocess.Popen(
        [
            *manage,
            "serve",
            "--port",
            str(port),
            *serve_args,
            *([] if worker else ["--no-worker"]),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = log_path.read_text()
            if "Uvicorn running" in text and (not worker or "ready." in text):
                break
            assert process.poll() is None, text
            time.sleep(0.3)
        else:
            pytest.fail("the app did not start:\n" + log_path.read_text())
        yield base, seeded.stdout, log_path
    finally:
        with contextlib.suppress(ProcessLookupError):  # a test may have stopped it
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        log.close()


def seeded_lines(text: str) -> dict[str, str]:
    """What ``seed_demo`` printed, by label (the member lines left out)."""
    return {
        line.split(": ", 1)[0]: line.split(": ", 1)[1]
        for line in text.splitlines()
        if ": " in line and not line.startswith("member")
    }


def embedded_env(directory: Path) -> dict[str, str]:
    """The environment of the embedded default, its data kept in ``directory``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "SECRET_KEY"}
    }
    env.update(DEBUG="1", GYMNASIA_DATA_DIR=str(directory / "var"))
    return env


@pytest.fixture
def embedded_app(tmp_path):
    with embedded_app_running(tmp_path) as running:
        yield running


def test_embedded_run_serves_admin_with_the_demo_owner(embedded_app):
    base, seeded, log_path = embedded_app
    owner = next(line for line in seeded.splitlines() if line.startswith("owner: "))
    _, username, password = owner.split(" ")
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    assert json.loads(browser.open(f"{base}/healthz").read()) == {
        "status": "ok",
        "rate_limits": "shared",
    }
    login_page = browser.open(f"{base}/admin/login/").read().decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login_page)
    assert csrf is not None
    form = urllib.parse.urlencode(
        {
            "csrfmiddlewaretoken": csrf.group(1),
            "username": username,
            "password": password,
            "next": "/admin/",
        }
    ).encode()
    request = urllib.request.Request(
        f"{base}/admin/login/?next=/admin/",
        data=form,
        headers={"Referer": f"{base}/admin/login/"},
    )
    dashboard = browser.open(request)
    assert dashboard.url == f"{base}/admin/"
    foods = browser.open(f"{base}/admin/nutrition/food/?q=arroz").read().decode()
    assert "Arroz blanco (cocido)" in foods
    assert "Arroz integral (cocido)" in foods
    log = log_path.read_text()
    assert "celery@" in log
    assert "No hostname was supplied" not in log
    # Staff's mail links lead to the address printed, where they signed in.
    assert f"Gymnasia at {base}/" in log
    port = base.rsplit(":", 1)[1]
    demo = f"http://localhost:{port}/demo/"
    assert f"Demo gym site with the chat widget: {demo}" in log
    site = browser.open(demo).read().decode()
    assert f'src="{base}/widget.js"' in site


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_stopping_the_server_stops_its_worker(tmp_path):
    """A SIGTERM to ``serve`` alone (as a process manager sends it) stops the web
    server and the Celery worker it started; none is left behind."""
    env = embedded_env(tmp_path)
    manage = [sys.executable, "manage.py"]
    subprocess.run(
        [*manage, "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    log_path = tmp_path / "serve.log"
    with log_path.open("w+") as log:
        process = subprocess.Popen(
            [*manage, "serve", "--port", str(free_port())],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while "ready." not in log_path.read_text():
                assert time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.3)
            workers = children_of(process.pid)
            assert workers, "serve started no worker"

            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)

            deadline = time.monotonic() + 20
            while any(alive(pid) for pid in workers):
                assert time.monotonic() < deadline, "the worker was left running"
                time.sleep(0.2)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


def test_serve_refuses_several_processes_without_redis(tmp_path):
    """Rate limits are counted in the cache: several web processes must share one,
    so without Redis ``serve --workers 2`` refuses to start and creates nothing."""
    result = subprocess.run(
        [sys.executable, "manage.py", "serve", "--workers", "2", "--no-worker"],
        cwd=ROOT,
        env=embedded_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "set REDIS_URL, or serve with --workers 1" in result.stderr
    assert list(tmp_path.glob("var/**/*")) == []  # no database, no broker folder


def _start_status(base: str, agent: str) -> int:
    request = urllib.request.Request(
        f"{base}/api/v1/conversations",
        data=json.dumps({"agent": agent}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def test_serve_from_two_processes_shares_limits_and_stops_them_all(tmp_path):
    """``serve --workers 2`` with Redis: two web processes answer, a rate limit
    holds across them, and a SIGTERM to ``serve`` alone stops both."""
    redis = OwnRedis()
    redis.start()
    try:
        with embedded_app_running(
            tmp_path,
            extra_env={"REDIS_URL": redis.url},
            serve_args=("--workers", "2"),
            worker=False,
        ) as (base, seeded, log_path):
            deadline = time.monotonic() + 60
            while len(re.findall(r"Started server process", log_path.read_text())) < 2:
                assert time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.2)
            log = log_path.read_text()
            parent = int(re.search(r"Started parent process \[(\d+)\]", log)[1])
            servers = {int(p) for p in re.findall(r"server process \[(\d+)\]", log)}
            assert len(servers) == 2 and all(alive(pid) for pid in servers)

            agent = seeded_lines(seeded)["agent"]
            # All 91 within one fixed minute's window: a try that crossed into
            # the next window would have counted its tail there already.
            seconds_left = 60 - time.time() % 60
            if seconds_left < 40:
                time.sleep(seconds_left + 0.2)
            window = int(time.time() // 60)
            statuses = [_start_status(base, agent) for _ in range(91)]
            assert int(time.time() // 60) == window, "91 starts took over 20 s"
            # 90 new conversations a minute from one address, whichever
            # process answered each.
            assert statuses == [201] * 90 + [429]

            os.kill(parent, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while any(alive(pid) for pid in {parent, *servers}):
                assert time.monotonic() < deadline, "a web process was left running"
                time.sleep(0.2)
    finally:
        redis.stop()


def test_serve_on_a_taken_port_says_how_to_choose_another(tmp_path):
    """``make run`` on a busy port says the port is taken and how to pick another,
    before it prints any address or starts a worker."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=ROOT,
            env=embedded_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert f"Port {port} is taken" in result.stderr
    assert f"make run PORT={port + 1}" in result.stderr
    assert "Gymnasia at" not in result.stdout
    assert list(tmp_path.glob("var/broker/*")) == []
