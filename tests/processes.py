"""Real processes for tests: Celery workers, the web server and a Redis server of the
test's own, on the test database, each stopped (killed if need be) whatever the
test does. The worker and fault tests of every app use these.

Never the run's shared Redis: `OwnRedis` runs the wheel's `redis-server` on a free port,
so a test can kill it and start it again on the same port.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import redis
import requests
from django.db import connection

from devtools import embedded
from devtools.devserver import procfile_command
from devtools.processes import spawn, stop_group
from devtools.sockets import free_port
from domains.edge.processes import endpoint_command

ROOT = Path(__file__).resolve().parents[1]
PRODUCTION_PROCFILE = ROOT / "Procfile.production"


def wait_for(predicate, *, timeout: float = 30.0, interval: float = 0.2, what: str = "condition"):
    """Poll until `predicate()` is truthy; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def database_url(name: str = "") -> str:
    """The URL of the test database, or of database `name` on the same server, for
    processes started by the test (on a unix socket, the embedded server's, its folder is
    the URL's host, quoted)."""
    db = connection.settings_dict
    auth = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        auth += f":{quote(db['PASSWORD'], safe='')}"
    host = quote(db["HOST"] or "127.0.0.1", safe="")
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{auth}@{host}{port}/{name or db['NAME']}"


class OwnRedis:
    """`redis-server` on a free loopback port, nothing on disk; kill() and start() again."""

    def __init__(self, tmp_path: Path):
        self.port = free_port()
        self.dir = tmp_path
        self.process: subprocess.Popen | None = None

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> OwnRedis:
        command = [
            str(embedded.redis_server()), "--port", str(self.port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", str(self.dir),
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        wait_for(self.answers, timeout=10, what=f"redis-server on port {self.port}")
        return self

    def answers(self) -> bool:
        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=0.2).ping())
        except redis.RedisError:
            return False

    def kill(self) -> None:
        if self.process is not None:
            stop_group(self.process, graceful=0)
            self.process = None


def service_env(settings, **extra: str) -> dict[str, str]:
    """The environment of a web or worker process on this test's database and settings."""
    env = os.environ.copy()
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "petstore.settings",
            "PETSTORE_ENV_FILE": "",
            "DEBUG": "0",
            "DATABASE_URL": database_url(),
            "REDIS_URL": settings.REDIS_URL,
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "SECRET_KEY": settings.SECRET_KEY,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "PLATFORM_DOMAIN": settings.PLATFORM_DOMAIN,
            "PLATFORM_CNAME_TARGET": settings.PLATFORM_CNAME_TARGET,
            "DOMAINS_DNS_NAMESERVERS": ",".join(settings.DOMAINS_DNS_NAMESERVERS),
            "DOMAINS_DNS_TIMEOUT": str(settings.DOMAINS_DNS_TIMEOUT),
            "DOMAINS_DNS_LIFETIME": str(settings.DOMAINS_DNS_LIFETIME),
            "DOMAINS_DNS_AUTHORITATIVE_PORT": str(settings.DOMAINS_DNS_AUTHORITATIVE_PORT),
            "DOMAINS_CA_IDENTIFIER": settings.DOMAINS_CA_IDENTIFIER,
            "DOMAINS_CA_DIR": str(settings.DOMAINS_CA_DIR),
            "DOMAINS_CA": settings.DOMAINS_CA,
            "DOMAINS_ACME_DIRECTORIES": ",".join(settings.DOMAINS_ACME_DIRECTORIES),
            "DOMAINS_ACME_EMAIL": settings.DOMAINS_ACME_EMAIL,
            "DOMAINS_ACME_CA_BUNDLE": ",".join(settings.DOMAINS_ACME_CA_BUNDLE),
            "DOMAINS_ACME_CAA_IDENTITIES": ",".join(settings.DOMAINS_ACME_CAA_IDENTITIES),
            "DOMAINS_KEY_ENCRYPTION_KEY": settings.DOMAINS_KEY_ENCRYPTION_KEY,
            "DOMAINS_CERT_ISSUE_DELAY": str(settings.DOMAINS_CERT_ISSUE_DELAY),
            "DOMAINS_VERIFY_WINDOW": str(settings.DOMAINS_VERIFY_WINDOW),
            "DOMAINS_VERIFY_DEADLINE": str(settings.DOMAINS_VERIFY_DEADLINE),
            "API_RATE_LIMIT": settings.API_RATE_LIMIT,
            "API_ADDRESS_RATE_LIMIT": settings.API_ADDRESS_RATE_LIMIT,
            "API_FAILED_KEY_RATE_LIMIT": settings.API_FAILED_KEY_RATE_LIMIT,
            "WEBHOOKS_ALLOW_LOOPBACK": "1" if settings.WEBHOOKS_ALLOW_LOOPBACK else "0",
            "OUTBOUND_ALLOWED_NETWORKS": ",".join(map(str, settings.OUTBOUND_ALLOWED_NETWORKS)),
            "DOMAINS_LOCAL_SUFFIXES": ",".join(settings.DOMAINS_LOCAL_SUFFIXES),
            "WEBHOOKS_CA_BUNDLE": settings.WEBHOOKS_CA_BUNDLE,
            "WEBHOOKS_TIMEOUT": str(settings.WEBHOOKS_TIMEOUT),
        }
    )
    if settings.DOMAINS_DNS01_SERVER:
        # DNS-01 as the test turned it on (tests/fixtures/dns01.py, knot.py). Only then: set
        # empty, DEBUG=1 would not turn it on by itself as `make run` does.
        env.update(
            {
                "DOMAINS_DNS01_SERVER": settings.DOMAINS_DNS01_SERVER,
                "DOMAINS_DNS01_ZONE": settings.DOMAINS_DNS01_ZONE,
                "DOMAINS_DNS01_TSIG_KEY_NAME": settings.DOMAINS_DNS01_TSIG_KEY_NAME,
                "DOMAINS_DNS01_TSIG_ALGORITHM": settings.DOMAINS_DNS01_TSIG_ALGORITHM,
                "DOMAINS_DNS01_TSIG_SECRET": settings.DOMAINS_DNS01_TSIG_SECRET,
                "DOMAINS_DNS01_WAIT": str(settings.DOMAINS_DNS01_WAIT),
            }
        )
    env.update(extra)
    return env


def workers_started(log_path: Path) -> int:
    """How many granian workers say in `log_path` that they have started."""
    return log_path.read_text(errors="replace").count("Started worker-")


def endpoint_workers() -> int:
    """How many workers the edge's certificate endpoint starts on this machine."""
    command = endpoint_command()
    return int(command[command.index("--workers") + 1])


@contextlib.contextmanager
def web_server_process(
    env: dict[str, str], tmp_path: Path, *, workers: int = 1, production: bool = False
):
    """The web processes' server (`python -m petstore.webserver`), `workers` workers of one
    thread each on a free port; with `production`, started by Procfile.production's web line
    through a shell, as a process manager runs it (the line's own environment included: no
    access lines), its `python` this one. Yields its base URL and its main process (the
    leader of its own process group). Its output: `web-<port>.log`."""
    port = free_port()
    log_path = tmp_path / f"web-{port}.log"
    env = {**env, "PORT": str(port), "WEB_CONCURRENCY": str(workers), "WEB_THREADS": "1"}
    command = [sys.executable, "-m", "petstore.webserver"]
    if production:
        command = ["/bin/sh", "-c", "exec " + procfile_command("web", PRODUCTION_PROCFILE)]
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    process = spawn(command, env=env, log_path=log_path)
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        if process.poll() is not None:
            pytest.fail("the web server exited:\n" + log_path.read_text(errors="replace")[-3000:])
        # Every worker listening (each on a socket of its own), not only the first to load.
        if workers_started(log_path) < workers:
            return False
        try:
            return requests.get(base + "/healthz", timeout=5).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_for(up, timeout=60, what="the web server's workers to answer /healthz")
        yield base, process
    finally:
        stop_group(process)


@contextlib.contextmanager
def web_server(env: dict[str, str], tmp_path: Path):
    """The web processes' server with one worker on a free port; yields its base URL."""
    with web_server_process(env, tmp_path) as (base, _):
        yield base


@contextlib.contextmanager
def paused(process: subprocess.Popen):
    """SIGSTOP the process's group, SIGCONT it on leaving: it accepts connections (the
    kernel queues them) but answers none until then."""
    os.killpg(process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(process.pid, signal.SIGCONT)


class Worker:
    """`celery -A petstore worker`: by default a prefork pool of one process.

    `pool="solo"` runs tasks in the main process; `purge=True` drops messages a
    previous test left on the queue; `queues` (comma-separated) limits what it consumes,
    as production's workers do (by default: every queue). `production="certificates"`
    (or "worker", "webhooks") runs that line of Procfile.production instead, through a
    shell as a process manager does, its options (pool, queue, gossip, heartbeats) as
    production has them, named `name` on this host.
    """

    def __init__(
        self, env: dict[str, str], tmp_path: Path, name: str, *,
        pool: str = "prefork", purge: bool = False, queues: str = "", production: str = "",
    ):  # fmt: skip
        self.name = f"{name}-{os.getpid()}@{socket.gethostname()}"
        self.log_path = tmp_path / f"worker-{name}.log"
        command = [
            sys.executable, "-m", "celery", "-A", "petstore", "worker",
            "--pool", pool, "--concurrency", "1", "--without-gossip", "--without-mingle",
            "--without-heartbeat", "--loglevel", "INFO", "-n", self.name,
            *(["--purge"] if purge else []), *(["-Q", queues] if queues else []),
        ]  # fmt: skip
        if production:
            line = procfile_command(production, PRODUCTION_PROCFILE)
            # The line's own -n names the worker by its host; the last -n wins.
            command = ["/bin/sh", "-c", f"exec {line} -n {self.name}"]
            env = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}
        self.process = spawn(command, env=env, log_path=self.log_path)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self) -> None:
        wait_for(
            lambda: self.process.poll() is not None or " ready." in self.log(),
            timeout=60,
            what=f"worker {self.name}",
        )
        if self.process.poll() is not None:
            pytest.fail(f"worker {self.name} exited:\n{self.log()[-3000:]}")

    def pool_children(self) -> list[int]:
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in path.read_text().split()]

    def kill(self) -> None:
        """SIGKILL the whole process group at once: no warm shutdown, no message handed
        back to the broker, as when the machine under a worker dies."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=5)

    def stop(self) -> None:
        stop_group(self.process, graceful=15)


@contextlib.contextmanager
def workers_running(*workers: Worker) -> Iterator[list[Worker]]:
    """`workers`, each ready before the block; all stopped after it, whatever happens."""
    try:
        for worker in workers:
            worker.wait_ready()
        yield list(workers)
    finally:
        for worker in workers:
            worker.stop()
