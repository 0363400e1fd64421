"""`make run` under a stream of custom domains: 200 Verify → Active cycles through the staff
commands, against every process `make run` starts, none of which may exit.

Why: `make run`'s embedded broker used to be kombu's filesystem transport. Under load a worker
died of a JSONDecodeError, and honcho then stopped every process, the developer's whole
service with it. `make run` now starts PostgreSQL and Redis from their wheels; this test is
the proof that its processes hold under load: the real `make run` (its embedded servers, its
Procfile's web, edge, workers, beat, DNS server and hints), and a second terminal doing what
staff do (`adddomain`, the CNAME in the development DNS zone file, `verifydomain`,
`domainstatus` until Active, `removedomain`). Nothing is mocked: the certificate each cycle
waits for is issued by make run's `certificates` worker, queued through its Redis.

The second terminal is one `manage.py shell` process running `run_cycles` below, which calls
the commands with `call_command`: 800 starts of `manage.py` would cost minutes of interpreter
start-up and measure nothing of `make run`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from devtools.starterzones import DEMO_ZONE, demo_zone_file
from domains.choices import Plan
from domains.dns import lookups
from domains.policy import PLAN_DOMAIN_QUOTA
from petstore.settings import embedded_sockets
from tests.makefile.test_make_run import free_udp_and_tcp_port, new_terminal
from tests.processes import ROOT, free_port

CYCLES = 200
# The demo's Pro project (loaddomainsdemo) holds at most its plan's quota of domains at once:
# each batch fills it, and is removed before the next.
DEMO_PROJECT = "demo-shop"
IN_FLIGHT = PLAN_DOMAIN_QUOTA[Plan.PRO]
# The hints' last line: printed once the web process and a worker answer. The hints wait up to
# 120 s for those; before them come the servers' start, migrate and the demo rows.
READY_LINE = "Ctrl-C stops every process."
READY_TIMEOUT = 180.0
# How long a batch's names may take to be served by the DNS server (it looks at its zone
# files at most once a second), and then to reach Active.
SERVED_TIMEOUT = 15.0
ACTIVE_TIMEOUT = 60.0
CYCLES_TIMEOUT = 360.0
STOP_TIMEOUT = 90.0
# What honcho prints when one of its processes ends (after that it stops all the others),
# what Celery prints when a pool process of a worker dies, and a worker's last words.
PROCESS_ENDED = (" stopped (rc=", " exited with ", "Unrecoverable error")
# What the hints print when the web process or a worker did not answer in time.
LATE = "did not answer within"
RESULT = "stress result: "
# What `make run` and the second terminal are told beyond their ports. Certificates are issued
# at once (the simulated CA otherwise waits 5 s before each); the delay is read where verifydomain
# queues the issuance, in the second terminal, so both have it. The other waits (Verify's
# cooldown, the re-add cooldown, the hourly limits) are not applied to staff commands.
FAST = {"DOMAINS_CERT_ISSUE_DELAY": "0"}


def terminal(**env: str) -> dict[str, str]:
    """A new terminal's environment: none of this test run's settings. pytest-django exports
    the tests' settings module, which would start private servers in every process."""
    clean = new_terminal(**env)
    clean.pop("DJANGO_SETTINGS_MODULE", None)
    return clean


def staff(*arguments: str) -> str:
    """A staff command, as `manage.py` would run it; its output."""
    output = io.StringIO()
    call_command(*arguments, stdout=output)
    return output.getvalue()


def wait_until_served(names: list[str]) -> bool:
    """Whether the development DNS server answers each name's CNAME within SERVED_TIMEOUT."""
    deadline = time.monotonic() + SERVED_TIMEOUT
    while time.monotonic() < deadline:
        if all(lookups.lookup(name, "CNAME").values for name in names):
            return True
        time.sleep(0.1)
    return False


def run_cycles(cycles: int, in_flight: int) -> None:
    """The second terminal: `cycles` domains, `in_flight` at a time, each added, given its
    CNAME (appended to the demo zone file, as the walk-through has the developer do),
    verified, watched until Active with a certificate, and removed. Prints one RESULT line.
    Stops at the first batch with a problem rather than wait out every batch after it."""
    zone_file = demo_zone_file(settings.DOMAINS_DEV_DNS_ZONES)
    target = settings.PLATFORM_CNAME_TARGET.rstrip(".")
    names = [f"d{number}.{DEMO_ZONE}" for number in range(cycles)]
    started = time.monotonic()
    active: dict[str, float] = {}  # name -> seconds from its adddomain to Active
    problems: list[str] = []
    for first in range(0, cycles, in_flight):
        batch = names[first : first + in_flight]
        added_at = {}
        for name in batch:
            added_at[name] = time.monotonic()
            staff("adddomain", DEMO_PROJECT, name)
        with zone_file.open("a") as zone:
            zone.write("".join(f"{name}. IN CNAME {target}.\n" for name in batch))
        if not wait_until_served(batch):
            problems.append(f"{batch}: not served by the DNS server within {SERVED_TIMEOUT} s")
        waiting = set()
        for name in batch:
            try:
                staff("verifydomain", name)
                waiting.add(name)
            except CommandError as exc:
                problems.append(f"{name}: {exc}")
        last: dict[str, dict] = {}
        deadline = time.monotonic() + ACTIVE_TIMEOUT
        while waiting and time.monotonic() < deadline:
            for name in sorted(waiting):
                last[name] = json.loads(staff("domainstatus", name))
                if last[name]["state"] == "active" and last[name]["certificate"]["serial"]:
                    active[name] = time.monotonic() - added_at[name]
                    waiting.discard(name)
            if waiting:
                time.sleep(0.2)
        for name in sorted(waiting):
            status = last.get(name, {})
            problems.append(
                f"{name}: not Active after {ACTIVE_TIMEOUT:.0f} s: {status.get('state')}, "
                f"certificate {status.get('certificate')}, check {status.get('check')}"
            )
        for name in batch:
            staff("removedomain", name)
        print(f"{len(active)}/{cycles} Active after {time.monotonic() - started:.1f} s", flush=True)
        if problems:
            break
    times = list(active.values()) or [0.0]
    result = {
        "active": len(active),
        "seconds": round(time.monotonic() - started, 1),
        "median": round(statistics.median(times), 2),
        "slowest": round(max(times), 2),
        "problems": problems,
    }
    print(RESULT + json.dumps(result), flush=True)


class MakeRun:
    """`make run` typed in the checkout, with its files in `var`: in a session of its own
    (Ctrl-C reaches its whole group), its output read line by line as it comes."""

    def __init__(self, var: Path) -> None:
        ports = {
            "PORT": free_port(),
            "HTTPS_PORT": free_port(),
            "EDGE_CERTIFICATES_PORT": free_port(),
            "DOMAINS_DEV_DNS_PORT": free_udp_and_tcp_port(),
        }
        # The install step is taken as done (tests/makefile/test_make_run.py: make_run).
        stamp = subprocess.run(
            ["make", "--no-print-directory", "--eval", "stamp-name: ; @echo $(call stamp,run)",
             "stamp-name"],
            cwd=ROOT, env=terminal(), capture_output=True, text=True, check=True, timeout=30,
        ).stdout.strip()  # fmt: skip
        command = ["make", "--no-print-directory", "-o", stamp, "run"]
        command += [f"{name}={value}" for name, value in ports.items()]
        # Unbuffered: each process's lines reach honcho as they are written, as in a terminal.
        env = terminal(PETSTORE_VAR_DIR=str(var), PYTHONUNBUFFERED="1", **FAST)
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors="replace", start_new_session=True,
        )  # fmt: skip
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        # Every process it started (the servers and honcho's each run in sessions of their
        # own), taken once it is up: what must still run under load, and end at Ctrl-C.
        self.started: list[psutil.Process] = []

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def output(self, last: int = 80) -> str:
        return "\n".join(self.lines[-last:])

    def wait_until_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while not any(line.endswith(READY_LINE) for line in self.lines):
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"make run printed no {READY_LINE!r}:\n{self.output()}")
            time.sleep(0.5)
        assert not [line for line in self.lines if LATE in line], self.output()
        self.started = psutil.Process(self.process.pid).children(recursive=True)

    def ended(self) -> list[str]:
        """The lines saying that a process of make run ended."""
        return [line for line in self.lines if any(sign in line for sign in PROCESS_ENDED)]

    def count(self, process: str, *words: str) -> int:
        """How many lines of honcho's `process` (e.g. "certificates.1") have all `words`."""
        prefix = f" {process} "
        return sum(prefix in line and all(word in line for word in words) for line in self.lines)

    def interrupt(self) -> int:
        """Ctrl-C: SIGINT to the whole group, as a terminal sends it; make's exit status."""
        os.killpg(self.process.pid, signal.SIGINT)
        status = self.process.wait(timeout=STOP_TIMEOUT)
        self.reader.join(timeout=10)
        return status

    def kill(self) -> None:
        """Whatever is left, killed: the test failed and must leave no server behind."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for process in self.started:
            with contextlib.suppress(psutil.Error):
                process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)


@contextlib.contextmanager
def make_run(var: Path) -> Iterator[MakeRun]:
    run = MakeRun(var)
    try:
        yield run
    finally:
        run.kill()


def second_terminal(var: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`manage.py` in another terminal, as Getting started says: PETSTORE_ENV_FILE exported."""
    env = terminal(PETSTORE_ENV_FILE=str(var / "local.env"), PETSTORE_VAR_DIR=str(var), **FAST)
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=CYCLES_TIMEOUT,
    )  # fmt: skip


def holding(var: Path) -> list[str]:
    """Processes that run from `var` or name it: the embedded PostgreSQL (its working
    directory is its data) and Redis (its socket is on its command line)."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "cwd"]):
        cwd, cmdline = process.info["cwd"] or "", " ".join(process.info["cmdline"] or [])
        if cwd.startswith(str(var)) or str(var) in cmdline:
            found.append(f"{process.info['pid']}: {cmdline} (in {cwd})")
    return found


def cycles_result(result: subprocess.CompletedProcess[str]) -> dict:
    """The RESULT line `run_cycles` printed, read."""
    for line in result.stdout.splitlines():
        if line.startswith(RESULT):
            return json.loads(line.removeprefix(RESULT))
    pytest.fail(f"the cycles printed no result:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")


def redis_answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as client:
        try:
            client.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            return False
    return True


@pytest.mark.timeout(600)
def test_200_verify_to_active_cycles_under_make_run_leave_every_process_running():
    # A short folder: the servers' unix sockets live in it, and a socket's path has ~100 bytes.
    var = Path(tempfile.mkdtemp(prefix="mr-"))
    try:
        with make_run(var) as run:
            run.wait_until_ready()
            names = {process.name() for process in run.started}
            assert {"postgres", "redis-server", "honcho", "celery"} <= names, names

            cycles_code = f"{__name__}.run_cycles({CYCLES}, {IN_FLIGHT})"
            result = second_terminal(var, "shell", "-c", f"import {__name__}; {cycles_code}")
            # Under the load, before Ctrl-C: no process ended, not even a worker's pool
            # process (Celery replaces those without honcho noticing).
            assert run.ended() == [], run.output()
            gone = [f"{p.pid} {p.name()}" for p in run.started if not p.is_running()]
            assert gone == [], run.output()
            cycles = cycles_result(result)
            summary = (
                f"{cycles['active']} of {CYCLES} cycles Active in {cycles['seconds']} s, "
                f"{IN_FLIGHT} in flight (adddomain to Active: median {cycles['median']} s, "
                f"slowest {cycles['slowest']} s)"
            )
            print(summary)
            assert (cycles["active"], cycles["problems"]) == (CYCLES, []), (
                f"{summary}\n{result.stderr[-3000:]}\n{run.output()}"
            )
            # Each certificate came from make run's certificates worker, through its Redis.
            issued = run.count("certificates.1", "issue_certificate[", "succeeded")
            assert issued >= CYCLES, run.output()

            # Ctrl-C stops every process, the embedded servers last.
            run.interrupt()
            _, alive = psutil.wait_procs(run.started, timeout=30)
            assert alive == [], run.output()
        assert holding(var) == []
        assert not (var / "postgres" / "postmaster.pid").exists()
        assert not redis_answers(embedded_sockets(var) / "redis.sock")
    finally:
        shutil.rmtree(var, ignore_errors=True)
