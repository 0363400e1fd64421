"""The cluster test's own services and processes: a private PostgreSQL cluster, a TCP
balancer in front of the edges' HTTP ports, and the platform's processes started from
Procfile.production's lines, each of which can be killed and started again (`Platform`
holds them all; `start` waits until each is ready).

A private PostgreSQL (the wheel's initdb into a temporary directory, `postgres` on a free
port) so the test can stop and start it without touching the machine's server; as root (CI)
it runs as the wheel's own user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from devtools import embedded
from devtools.devserver import procfile_command
from devtools.processes import spawn, stop_group
from devtools.sockets import free_port, tcp_port_open
from tests.processes import PRODUCTION_PROCFILE, ROOT, wait_for

API_HOST = "localhost"
DATABASE = "petstore"


def production_command(name: str, number: int | None = None) -> str:
    """The shell command of Procfile.production's process `name`; a worker line given a
    `number` has a node name of its own (two workers of one line on one host)."""
    command = procfile_command(name, PRODUCTION_PROCFILE)
    return command if number is None else re.sub(r"-n (\w+)@", rf"-n \g<1>-{number}@", command)


class PrivatePostgres(embedded.Postgres):
    """A PostgreSQL cluster of the test's own on a free loopback port: crash() and start()
    again on the same port. A commit is acknowledged once its WAL is written, as in
    production (`synchronous_commit=on`), so a crash of PostgreSQL loses none; nothing in it
    must survive a crash of the machine (no fsync): the test's speed matters."""

    def __init__(self) -> None:
        # A short path: the unix socket lives here too (108 bytes at most).
        self.dir = Path(tempfile.mkdtemp(prefix="pg-cluster-"))
        options = ["fsync=off", "synchronous_commit=on", "full_page_writes=off"]
        options.append("max_connections=200")
        super().__init__(self.dir / "data", self.dir / "run", options=options, port=free_port())
        self.init()

    def remove(self) -> None:
        self.crash()
        shutil.rmtree(self.dir, ignore_errors=True)


class Balancer:
    """A TCP balancer on a free loopback port: each connection goes to the first target
    that accepts it, starting with the next in turn (an L4 load balancer in front of the
    edge nodes' port 80, where the CA's HTTP-01 requests arrive)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.targets: list[int] = []
        self._turn = 0
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        targets = list(self.targets)
        self._turn += 1
        upstream = None
        for i in range(len(targets)):
            port = targets[(self._turn + i) % len(targets)]
            try:
                upstream = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                continue
        if upstream is None:
            client.close()
            return
        upstream.settimeout(None)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)

    def stop(self) -> None:
        self._stopped = True
        self._server.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    for sock in (source, sink):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()


@dataclass
class Service:
    """One process of the platform, run by a shell as a process manager runs a Procfile
    line; each start logs to a file of its own (`<name>-<n>.log`)."""

    name: str
    command: str
    env: dict[str, str]
    log_dir: Path
    starts: int = 0
    process: subprocess.Popen | None = None
    logs: list[Path] = field(default_factory=list)
    # Whether the supervisor starts it again when it exits (not while the test holds it down).
    supervised: bool = False

    def start(self) -> None:
        self.starts += 1
        log_path = self.log_dir / f"{self.name}-{self.starts}.log"
        self.logs.append(log_path)
        command = ["/bin/sh", "-c", "exec " + self.command]
        self.process = spawn(command, env=self.env, log_path=log_path)
        self.supervised = True

    def log(self) -> str:
        """This start's log."""
        return self.logs[-1].read_text(errors="replace")

    def all_logs(self) -> str:
        return "".join(path.read_text(errors="replace") for path in self.logs)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole process group: no shutdown, no message handed back, as when
        the machine under it dies."""
        assert self.process is not None
        self.supervised = False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        self.supervised = False
        if self.process is not None:
            stop_group(self.process, graceful=10)


class Supervisor:
    """What production's process manager does (compose's `restart: unless-stopped`, systemd's
    Restart=, a PaaS restarting a crashed dyno): a process that exits on its own is started
    again; each such restart is recorded with the last line its log had."""

    def __init__(self, services: list[Service]) -> None:
        self.services = services
        self.restarts: list[tuple[str, float, str]] = []
        self._stopped = threading.Event()
        self._began = time.monotonic()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stopped.wait(0.5):
            for service in self.services:
                if service.supervised and not service.alive():
                    last = (service.log().strip().splitlines() or [""])[-1][:200]
                    self.restarts.append((service.name, elapsed_since(self._began), last))
                    service.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)


def elapsed_since(start: float) -> float:
    return round(time.monotonic() - start, 2)


@dataclass
class Platform:
    env: dict[str, str]
    webs: list[Service]
    web_ports: list[int]
    edges: list[Service]
    https_ports: list[int]
    checks: list[Service]
    certificates: list[Service]
    beat: Service
    api_ca: Path
    supervisor: Supervisor | None = None

    def services(self) -> list[Service]:
        return [*self.webs, *self.edges, *self.checks, *self.certificates, self.beat]

    def manage(self, *args: str) -> str:
        result = subprocess.run(  # noqa: S603
            [sys.executable, "manage.py", *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout

    def readyz(self, index: int) -> int:
        """The web process's own /readyz status (0: no answer)."""
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.web_ports[index], timeout=5)
            connection.request("GET", "/readyz", headers={"Host": API_HOST})
            return connection.getresponse().status
        except OSError:
            return 0


def _ready(service: Service, platform: Platform) -> Callable[[], bool]:
    def check() -> bool:
        if not service.alive():
            pytest.fail(f"{service.name} exited:\n{service.log()[-3000:]}")
        if service in platform.webs:
            return platform.readyz(platform.webs.index(service)) == 200
        if service in platform.edges:
            return tcp_port_open(platform.https_ports[platform.edges.index(service)])
        if service is platform.beat:
            return "beat: Starting..." in service.log()
        return " ready." in service.log()

    return check


def start(platform: Platform, *services: Service) -> None:
    for service in services:
        service.start()
    for service in services:
        wait_for(_ready(service, platform), timeout=90, what=f"{service.name} to be ready")
