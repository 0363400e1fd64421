"""The web processes' server (petstore/webserver.py), run as production runs it: its
configuration from the environment, the access line (alone; the edge writes it in production)
and request id of every request,
keep-alive, a slow client's headers held by no worker, a worker that dies started again,
and a graceful restart (SIGHUP) during which requests in flight finish and new ones are
answered."""

from __future__ import annotations

import http.client
import importlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
import requests
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import override_settings

import petstore.settings.core
from pets.models import Category, Pet
from petstore import webserver
from petstore.apikeys.services import api_key_issue
from tests.processes import ROOT, database_url, service_env, wait_for, web_server_process

WEB_SETTINGS = (
    "WEB_BIND",
    "PORT",
    "WEB_CONCURRENCY",
    "WEB_THREADS",
    "WEB_HEADER_TIMEOUT",
    "WEB_GRACEFUL_TIMEOUT",
    "WEB_ACCESS_LOG",
)


def config_from(monkeypatch: pytest.MonkeyPatch, **values: str) -> webserver.WebServerConfig:
    """The launcher's configuration from these variables, read as a fresh start reads them."""
    for name in WEB_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    core = importlib.reload(petstore.settings.core)  # the section that reads them
    with override_settings(**{name: getattr(core, name) for name in WEB_SETTINGS}):
        return webserver.WebServerConfig.from_settings()


def test_the_defaults_listen_on_loopback_with_a_worker_per_core_and_one_more(monkeypatch):
    config = config_from(monkeypatch)
    assert config.bind == "127.0.0.1"  # only the edge on this host reaches it
    assert config.port == 8000
    assert config.workers == len(os.sched_getaffinity(0)) + 1
    assert config.threads == 1
    assert config.access_log is True
    assert config_from(monkeypatch, WEB_CONCURRENCY="5", WEB_BIND="0.0.0.0").workers == 5


def test_the_server_keeps_connections_alive_respawns_workers_and_stops_them_in_time(monkeypatch):
    server = webserver.build(config_from(monkeypatch, WEB_GRACEFUL_TIMEOUT="7"), {"version": 1})
    assert server.interface == "wsgi" and server.target == "petstore.wsgi:served"
    assert server.http1_settings is not None and server.http1_settings.keep_alive
    assert server.respawn_failed_workers is True
    assert server.workers_kill_timeout == 7


@pytest.mark.parametrize(
    ("name", "value"), [("WEB_CONCURRENCY", "-1"), ("WEB_THREADS", "many"), ("PORT", "-1")]
)
def test_a_value_that_cannot_be_used_is_refused(monkeypatch, name, value):
    with pytest.raises(ImproperlyConfigured, match=name):
        config_from(monkeypatch, **{name: value})


def test_a_bad_value_stops_the_launcher_with_one_line():
    env = {**os.environ, "SECRET_KEY": "x", "WEB_CONCURRENCY": "three", "PETSTORE_ENV_FILE": ""}
    result = subprocess.run(
        [sys.executable, "-m", "petstore.webserver"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "web server: WEB_CONCURRENCY must be an integer, got 'three'"
    ]


def log_of(tmp_path: Path) -> str:
    (log_path,) = tmp_path.glob("web-*.log")
    return log_path.read_text(errors="replace")


@pytest.mark.parametrize("log_format", ["plain", "json"])
def test_alone_every_request_has_an_access_line_and_a_request_id(
    transactional_db, settings, tmp_path, log_format
):
    """The launcher by itself (WEB_ACCESS_LOG unset), as `make run` starts it: its own access
    lines. Behind the edge, production's line turns them off (tests/domains/edge/
    test_access_log.py)."""
    env = service_env(settings, LOG_FORMAT=log_format)
    env.pop("WEB_ACCESS_LOG", None)
    with web_server_process(env, tmp_path) as (base, _):
        given = requests.get(base + "/healthz?probe=1", headers={"X-Request-Id": "trace-42"})
        made = requests.get(base + "/readyz")
        wait_for(lambda: log_of(tmp_path).count("/readyz") >= 1, what="the access lines")
    assert given.headers["X-Request-ID"] == "trace-42"
    assert re.fullmatch(r"[0-9a-f]{32}", made.headers["X-Request-ID"])
    lines = [line for line in log_of(tmp_path).splitlines() if "granian.access" in line]
    if log_format == "json":
        lines = [json.loads(line)["message"] for line in lines]
    healthz = [line for line in lines if '"GET /healthz HTTP/1.1" 200' in line and "probe" in line]
    readyz = [line for line in lines if '"GET /readyz HTTP/1.1" 200' in line]
    assert len(healthz) == len(readyz) == 1, lines
    assert healthz[0].endswith('query="probe=1" id=trace-42')
    assert readyz[0].endswith(" id=-")  # came without one: the app's own is in the answer


def test_connections_are_kept_alive_and_slow_headers_hold_no_worker(
    transactional_db, settings, tmp_path
):
    """One worker of one thread: a client that never finishes its headers is waited for by
    the server's runtime, not by the thread that runs the app."""
    with web_server_process(service_env(settings), tmp_path) as (base, _):
        address = urlsplit(base)
        stalled = socket.create_connection((address.hostname, address.port))
        try:
            stalled.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            reused = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
            for _ in range(3):
                reused.request("GET", "/healthz", headers={"Host": "localhost"})
                response = reused.getresponse()
                assert response.status == 200
                response.read()
            local = reused.sock.getsockname()
            reused.request("GET", "/healthz", headers={"Host": "localhost"})
            reused.getresponse().read()
            assert reused.sock.getsockname() == local  # the same connection throughout
            reused.close()
        finally:
            stalled.close()


def spawned_workers(log: str) -> list[int]:
    return [int(pid) for pid in re.findall(r"Spawning worker-\d+ with PID: (\d+)", log)]


def test_a_worker_that_dies_is_started_again_and_the_other_answers_meanwhile(
    transactional_db, settings, tmp_path
):
    with web_server_process(service_env(settings), tmp_path, workers=2) as (base, _):
        first, _ = spawned_workers(log_of(tmp_path))
        os.kill(first, signal.SIGKILL)
        # Gone: its listening socket with it (one a worker, on Linux; see the module).
        wait_for(lambda: _ended(first), what=f"worker {first} to end")
        statuses = [_health(base) for _ in range(20)]
        wait_for(lambda: len(spawned_workers(log_of(tmp_path))) == 3, what="a new worker")
        assert "Respawning worker-1" in log_of(tmp_path)
        statuses += [_health(base) for _ in range(20)]
    answered = [status for status in statuses if isinstance(status, int)]
    assert len(answered) >= 35 and set(answered) == {200}, statuses
    # As in a graceful restart (below): a connection the kernel had queued at the dead
    # worker's own socket is reset unless Linux hands it to the other worker's.
    if _tcp_migrate_req():
        assert answered == statuses
    else:
        assert set(statuses) - set(answered) <= {"ConnectionError"}


def _health(base: str) -> int | str:
    try:
        return requests.get(base + "/healthz", timeout=5).status_code
    except requests.RequestException as exc:
        return type(exc).__name__


def test_a_graceful_restart_finishes_the_requests_in_flight_and_answers_new_ones(
    transactional_db, settings, tmp_path, django_user_model
):
    """SIGHUP replaces both workers, one after the other; a list blocked on a lock in an
    old worker when its restart begins is answered, and a client asking all along never
    gets a 5xx."""
    settings.API_RATE_LIMIT = settings.API_ADDRESS_RATE_LIMIT = ""
    user = django_user_model.objects.create_user("rhea")
    auth = {"Authorization": f"Bearer {api_key_issue(user=user).plaintext}"}
    Pet.objects.create(name="Rex", category=Category.objects.create(name="Dogs"))
    table = Pet._meta.db_table
    env = service_env(settings, WEB_GRACEFUL_TIMEOUT="60")
    with web_server_process(env, tmp_path, workers=2) as (base, server):
        old = spawned_workers(log_of(tmp_path))
        assert len(old) == 2
        statuses: list[int | str] = []
        stop = threading.Event()

        def keep_asking() -> None:
            while not stop.is_set():
                try:
                    statuses.append(requests.get(base + "/healthz", timeout=30).status_code)
                except requests.RequestException as exc:
                    statuses.append(type(exc).__name__)

        in_flight: list[int | str] = []

        def list_pets() -> None:
            try:
                in_flight.append(
                    requests.get(base + "/v1/pets", headers=auth, timeout=90).status_code
                )
            except requests.RequestException as exc:
                in_flight.append(type(exc).__name__)

        with psycopg.connect(database_url()) as locker:
            locker.execute(f'LOCK TABLE "{table}" IN ACCESS EXCLUSIVE MODE')
            # One in each worker at least (the kernel spreads connections between them):
            # each blocked in its worker's thread, or queued behind the one that is.
            blocked: list[threading.Thread] = []
            while _waiting_on_lock() < 2:
                assert len(blocked) < 16, "the lists never reached both workers"
                blocked.append(threading.Thread(target=list_pets))
                blocked[-1].start()
                time.sleep(0.3)
            asker = threading.Thread(target=keep_asking)
            asker.start()
            server.send_signal(signal.SIGHUP)
            wait_for(
                lambda: "Stopping old worker-1" in log_of(tmp_path),
                timeout=30,
                what="the first old worker to be stopped",
            )
            time.sleep(1)  # the old workers are stopping, and one holds the list
            locker.rollback()  # the lock goes; the list goes on
        wait_for(
            lambda: "Stopped old worker-2" in log_of(tmp_path),
            timeout=90,
            what="both workers replaced",
        )
        time.sleep(0.5)
        stop.set()
        asker.join(timeout=40)
        for thread in blocked:
            thread.join(timeout=40)
        assert requests.get(base + "/v1/pets", headers=auth, timeout=10).status_code == 200
    assert in_flight == [200] * len(blocked)
    new = spawned_workers(log_of(tmp_path))[2:]
    assert len(new) == 2 and not set(new) & set(old)
    answered = [status for status in statuses if isinstance(status, int)]
    assert len(answered) > 20 and set(answered) == {200}, sorted(map(str, set(statuses)))
    # A connection the kernel had queued at a stopping worker's own socket is reset, unless
    # Linux hands it to another worker's (net.ipv4.tcp_migrate_req, which
    # compose.zero-reset.yaml turns on and docs/operators/ names); never an answer lost once a
    # worker took the request.
    if _tcp_migrate_req():
        assert len(answered) == len(statuses), sorted(map(str, set(statuses)))
    else:
        assert set(statuses) - set(answered) <= {"ConnectionError"}


def _waiting_on_lock() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def _ended(pid: int) -> bool:
    """The process has exited (a zombie until its parent reaps it holds no socket)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True


def _tcp_migrate_req() -> bool:
    return Path("/proc/sys/net/ipv4/tcp_migrate_req").read_text().strip() == "1"
