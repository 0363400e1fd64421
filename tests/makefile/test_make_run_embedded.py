"""`make run` as a newcomer meets it, with nothing in the environment: PostgreSQL and Redis
from their wheels, found by `manage.py` in a second terminal, one run per checkout, and
everything stopped with Ctrl-C, the servers last."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.makefile.test_make_run import (
    free_udp_and_tcp_port,
    make_run,
    manage,
    new_terminal,
    stamp,
)
from tests.processes import ROOT, free_port

HINTS_DONE = "Ctrl-C stops every process."

pytestmark = pytest.mark.timeout(300)


class Run:
    """`make run` in a session of its own, its output gathered line by line."""

    def __init__(self, var: Path, ports: dict[str, int]) -> None:
        command = ["make", "--no-print-directory", "-o", stamp(), "run"]
        command += [f"{name}={value}" for name, value in ports.items()]
        self.process = subprocess.Popen(  # noqa: S603
            command, cwd=ROOT, env=new_terminal(PETSTORE_VAR_DIR=str(var)),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, text: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in self.lines):
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        pytest.fail(f"make run never printed {text!r}:\n" + self.output()[-4000:])

    def interrupt(self) -> int:
        """Ctrl-C in its terminal: SIGINT to the whole foreground group."""
        os.killpg(self.process.pid, signal.SIGINT)
        return self.process.wait(timeout=90)


def servers_of(var: Path) -> list[psutil.Process]:
    """The embedded PostgreSQL and Redis processes serving from `var`."""
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        command = " ".join(process.info["cmdline"] or [])
        if process.info["name"] in {"postgres", "redis-server"} and str(var) in command:
            found.append(process)
    return found


@pytest.fixture
def var() -> Iterator[Path]:
    # Short: the servers' unix sockets live under it (a socket's path is at most 107 bytes).
    folder = Path(tempfile.mkdtemp(prefix="mr-"))
    yield folder / "var"
    for process in servers_of(folder):
        process.kill()
    shutil.rmtree(folder, ignore_errors=True)


def test_make_run_serves_on_postgresql_and_redis_from_their_wheels_and_stops_them(var):
    ports = {
        "PORT": free_port(),
        "HTTPS_PORT": free_port(),
        "EDGE_CERTIFICATES_PORT": free_port(),
        "DOMAINS_DEV_DNS_PORT": free_udp_and_tcp_port(),
    }
    run = Run(var, ports)
    try:
        run.wait_for(HINTS_DONE)
        # A second terminal, as Getting started says: the same servers, by their sockets in
        # var/.
        vendor = manage(
            var, "shell", "-c", "from django.db import connection as c; print(c.vendor)"
        )
        assert vendor.splitlines()[-1] == "postgresql"
        broker = manage(
            var, "shell", "-c", "from django.conf import settings as s; print(s.CELERY_BROKER_URL)"
        )
        assert broker.splitlines()[-1] == f"redis+socket://{var}/run/redis.sock?virtual_host=1"
        configured = manage(var, "diffsettings")
        assert (
            f"DOMAINS_DNS_NAMESERVERS = ['127.0.0.1:{ports['DOMAINS_DEV_DNS_PORT']}']" in configured
        )
        assert f"EDGE_CERTIFICATES_PORT = {ports['EDGE_CERTIFICATES_PORT']}" in configured
        hint = manage(var, "loaddemo").splitlines()[-1]
        assert hint.endswith(f" http://localhost:{ports['PORT']}/v1/pets")
        assert {process.info["name"] for process in servers_of(var)} == {"postgres", "redis-server"}

        # A second `make run` of the same checkout says so, and leaves the first one's file.
        settings_file = (var / "local.env").read_text()
        again = make_run(var, PORT=free_port(), HTTPS_PORT=free_port())
        assert again.returncode != 0
        [refusal] = again.stderr.splitlines()[:1]
        assert refusal.startswith("make run: already running in this checkout (pid ")
        assert f"http://localhost:{ports['PORT']}/" in refusal
        assert (var / "local.env").read_text() == settings_file
        assert not any("stopped (rc=" in line for line in run.lines), run.output()[-3000:]
    finally:
        run.interrupt()
    assert servers_of(var) == [], run.output()[-3000:]
    assert not (var / "run" / "redis.sock").exists()


def test_a_step_that_fails_before_the_processes_start_is_one_line_and_stops_the_servers(var):
    """A migration that cannot run (the settings file names a database no server serves)
    ends `make run` with one line after the command's own output, not a traceback of ours,
    and leaves the Redis it started no longer running."""
    var.mkdir(parents=True)
    (var / "local.env").write_text("DEBUG=1\nDATABASE_URL=postgres://postgres@127.0.0.1:1/none\n")
    result = make_run(
        var,
        PORT=free_port(),
        HTTPS_PORT=free_port(),
        EDGE_CERTIFICATES_PORT=free_port(),
        DOMAINS_DEV_DNS_PORT=free_udp_and_tcp_port(),
    )
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert "make run: manage.py migrate failed (exit 1); see above" in lines, result.stderr[-2000:]
    assert not any("CalledProcessError" in line for line in lines)
    assert servers_of(var) == []
