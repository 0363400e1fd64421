"""`make run`: its development settings file, a check that its ports are free before anything
starts, the embedded PostgreSQL and Redis, its Procfile's processes, and the hints a newcomer
needs, printed once the service answers.

    python -m devtools.devserver run             # `make run`: all of the below, in order
    python -m devtools.devserver localenv check  # this run's ports into PETSTORE_ENV_FILE,
                                                 # then one line and exit 1 if one is taken
    python -m devtools.devserver hints           # the Procfile's `hints:` process

The Procfile is the one description of how `make run` serves; `procfile_command` reads a
line of it, so a test can start the web process exactly as `make run` does.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path

import django
from django.conf import settings
from django.core.management import call_command

from devtools import embedded, localenv
from devtools.sockets import PortInUseError, bind_udp_and_tcp
from petstore.celery import app
from petstore.ports import DEFAULT_PORT, MAKE_RUN_HTTPS_PORT
from petstore.webserver import available_cores

ROOT = Path(__file__).resolve().parent.parent
PROCFILE = ROOT / "petstore" / "Procfile"
# How long `hints` waits for the web process and the worker before saying so.
READY_TIMEOUT = 120.0
# How far above a taken port `check` looks for a free one to suggest.
PORT_SEARCH = 100


def procfile_command(name: str, procfile: Path = PROCFILE) -> str:
    """The shell command of the Procfile's process `name` (e.g. "web")."""
    for line in procfile.read_text().splitlines():
        process, sep, command = line.partition(":")
        if sep and process.strip() == name and not process.lstrip().startswith("#"):
            return command.strip()
    raise KeyError(f"{procfile} has no {name!r} process")


def web_port(environ: Mapping[str, str] = os.environ) -> int:
    """The port `make run` serves on: PORT, as `run` passes it to `check`."""
    return int(environ.get("PORT") or DEFAULT_PORT)


def take_run_ports(environ: MutableMapping[str, str] = os.environ) -> None:
    """`make run`'s ports into the environment every step and process reads: those its
    command line names (`make run PORT=8001`), the others' defaults. PORT is also honcho's
    first port (it gives every other process one of its own, 100 apart), so HTTP_PORT names
    the web process's to them all."""
    environ["PORT"] = str(web_port(environ))
    environ["HTTPS_PORT"] = environ.get("HTTPS_PORT") or str(MAKE_RUN_HTTPS_PORT)
    environ["HTTP_PORT"] = environ["PORT"]


def tcp_port_in_use(port: int, host: str = "0.0.0.0") -> bool:  # noqa: S104 (any address, as Caddy binds)
    """Whether a server could not listen on (host, port), tried on every address as Caddy binds."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            sock.listen(1)
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return False


def dns_port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """Whether the development DNS server could not take `port` (UDP and TCP, as it binds)."""
    try:
        udp, tcp = bind_udp_and_tcp(host, port)
    except (PortInUseError, PermissionError):
        return True
    udp.close()
    tcp.close()
    return False


@dataclass(frozen=True)
class RunPort:
    """One port `make run` needs: its variable, its value for this run, what takes it."""

    setting: str
    port: int
    what: str
    in_use: Callable[[int], bool]

    def describe(self) -> str:
        return f"port {self.port} ({self.what})"


def run_ports() -> list[RunPort]:
    """`make run`'s ports, in localenv.PORT_SETTINGS' order, from the environment (the
    Makefile's command line) or the settings' defaults."""
    dns = "the development DNS server, UDP and TCP; 5353 is also mDNS"
    return [
        RunPort("PORT", web_port(), "the web process", tcp_port_in_use),
        RunPort(
            "HTTPS_PORT",
            settings.HTTPS_PORT,
            "the TLS edge",
            tcp_port_in_use,  # Caddy binds 0.0.0.0
        ),
        RunPort(
            "EDGE_CERTIFICATES_PORT",
            settings.EDGE_CERTIFICATES_PORT,
            "the edge's certificate endpoint",
            lambda port: tcp_port_in_use(port, "127.0.0.1"),
        ),
        RunPort("DOMAINS_DEV_DNS_PORT", settings.DOMAINS_DEV_DNS_PORT, dns, dns_port_in_use),
    ]


def free_port_above(run_port: RunPort, avoid: set[int]) -> int | None:
    """The first port above `run_port`'s that its server could take, none of `avoid`."""
    for port in range(run_port.port + 1, min(run_port.port + PORT_SEARCH, 65535) + 1):
        if port not in avoid and not run_port.in_use(port):
            return port
    return None


def busy_port_message(environ: Mapping[str, str] = os.environ) -> str | None:
    """The one line `make run` stops with when one of its ports is taken, else None: which
    ports, and the whole command line again with a free port (checked) for each."""
    ports = run_ports()
    busy = [run_port for run_port in ports if run_port.in_use(run_port.port)]
    if not busy:
        return None
    chosen = {run_port.setting: run_port.port for run_port in ports}
    for run_port in busy:
        free = free_port_above(run_port, set(chosen.values()))
        if free is None:
            return (
                f"make run: {run_port.describe()} is in use and the next {PORT_SEARCH} are "
                f"too; set {run_port.setting} to a free port"
            )
        chosen[run_port.setting] = free
    # The variables this run was given (`run` always sets PORT and HTTPS_PORT) and
    # the ones moved: the user's command line, with the taken ports replaced.
    named = [
        f"{setting}={chosen[setting]}"
        for setting in localenv.PORT_SETTINGS
        if environ.get(setting) or setting in {run_port.setting for run_port in busy}
    ]
    taken = " and ".join(run_port.describe() for run_port in busy)
    verb = "is" if len(busy) == 1 else "are"
    return f"make run: {taken} {verb} in use; try: make run {' '.join(named)}"


def check() -> int:
    message = busy_port_message()
    if message:
        print(message, file=sys.stderr)
        return 1
    return 0


def env_file() -> Path:
    """The development settings file this run names (the Makefile: var/local.env)."""
    name = os.environ.get("PETSTORE_ENV_FILE") or "var/local.env"
    return ROOT / name


def write_local_env() -> int:
    """Write this run's ports into the development settings file, before anything reads it:
    `check` and every process `make run` starts then see what a second terminal sees."""
    localenv.write(env_file(), os.environ)
    return 0


@contextlib.contextmanager
def checkout_lock(folder: Path) -> Iterator[str | None]:
    """Held while this `make run` lives (the kernel drops it with the process, however it
    ends): yields None, or, when another `make run` of this checkout holds it, what that one
    wrote into it (its pid and web port)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run.lock"
    with open(path, "a+", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            yield lock.read().strip() or "?"
            return
        lock.truncate(0)
        lock.write(f"pid {os.getpid()}, http://localhost:{web_port()}/\n")
        lock.flush()
        yield None


def write_and_check_ports() -> int:
    """This run's ports into the settings file, then the port check; a refused run puts the
    file back as it was, so a second terminal keeps talking to the run that is serving."""
    path = env_file()
    before = path.read_bytes() if path.exists() else None
    write_local_env()
    if status := check():
        if before is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(before)
    return status


def embedded_servers() -> list[embedded.Postgres | embedded.Redis]:
    """The servers this run starts: those the settings (environment and settings file)
    name none of."""
    servers: list[embedded.Postgres | embedded.Redis] = []
    if not os.environ.get("DATABASE_URL"):
        servers.append(embedded.Postgres(settings.EMBEDDED_POSTGRES_DIR, settings.EMBEDDED_SOCKETS))
    if not os.environ.get("REDIS_URL"):
        servers.append(embedded.Redis(settings.EMBEDDED_REDIS_SOCKET))
    return servers


def manage(*arguments: str, quiet: bool = False) -> None:
    subprocess.run(  # noqa: S603 (this checkout's manage.py)
        [sys.executable, str(ROOT / "manage.py"), *arguments],
        check=True,
        stdout=subprocess.DEVNULL if quiet else None,
    )


def processes_environment(environ: Mapping[str, str], cores: int) -> dict[str, str]:
    """This environment, this venv first on the PATH, and unless it says otherwise one web
    worker a core (production's, one more, makes granian warn on a laptop running it all)."""
    venv_bin = Path(sys.executable).parent  # the Procfile's `python` and `celery`
    return {
        "WEB_CONCURRENCY": str(cores),
        **environ,
        "PATH": f"{venv_bin}{os.pathsep}{environ.get('PATH', '')}",
    }


def honcho() -> int:
    """The Procfile's processes until honcho ends (Ctrl-C reaches it from the terminal; a
    SIGTERM to this process is passed on to it)."""
    runner = str(Path(sys.executable).parent / "honcho")
    process = subprocess.Popen(  # noqa: S603 (honcho from this venv)
        [runner, "--procfile", str(PROCFILE), "--app-root", str(ROOT), "start"],
        env=processes_environment(os.environ, available_cores()),
    )
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # honcho stops its processes first
    signal.signal(signal.SIGTERM, lambda *_: process.send_signal(signal.SIGTERM))
    return process.wait()


def run() -> int:
    """`make run`: one per checkout; the ports checked and written; the embedded servers
    started (and stopped after the rest); the database migrated and its demo rows loaded;
    then the Procfile's processes."""
    take_run_ports()
    # Beside the settings file (var/), found before the settings load: they read that file,
    # which must hold this run's ports first.
    with checkout_lock(env_file().parent) as other:
        if other:
            print(
                f"make run: already running in this checkout ({other}); use that one, or stop "
                "it with Ctrl-C in its terminal first",
                file=sys.stderr,
            )
            return 1
        if status := write_and_check_ports():
            return status
        servers = embedded_servers()
        try:
            with embedded.running(*servers):
                for server in servers:
                    if isinstance(server, embedded.Postgres):
                        server.create_database(settings.EMBEDDED_DATABASE)
                manage("migrate", "--noinput")
                manage("loaddemo", quiet=True)
                return honcho()
        except embedded.ServerError as exc:
            print(f"make run: {exc}", file=sys.stderr)
            return 1
        except subprocess.CalledProcessError as failed:
            # Its own output, above, says why; the servers are stopped already.
            step = " ".join(Path(word).name for word in failed.cmd[1:3])
            print(f"make run: {step} failed (exit {failed.returncode}); see above", file=sys.stderr)
            return 1


def web_ready(port: int) -> bool:
    request = urllib.request.Request(  # noqa: S310 (a fixed http URL on loopback)
        f"http://127.0.0.1:{port}/readyz", headers={"Host": f"localhost:{port}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:  # noqa: S310
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def worker_ready() -> bool:
    return bool(app.control.ping(timeout=1.0))


def wait_until(what: str, predicate: Callable[[], bool], timeout: float = READY_TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    print(f"hints: {what} did not answer within {timeout:.0f} s; the hints follow anyway.")
    return False


def shown_path(path: Path) -> str:
    """`path` as a command typed in the checkout names it (relative when inside), quoted."""
    return shlex.quote(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path))


def hint_lines(base: str, local_env: str) -> list[str]:
    """How to use the running service: its URLs (the dashboard, the account page, the mail
    inbox, the webhook receiver), the line that gives a second terminal this run's URL and
    settings file (the README's curl lines read PETSTORE_URL), an API key and a curl line,
    the metrics endpoint with its token. `local_env` is the settings file as a shell word: a
    new terminal has none of make run's settings, so each command takes them from there."""
    loopback = base.replace("//localhost:", "//127.0.0.1:")  # where the worker can POST
    return [
        f"  Dashboard: {base}/dashboard/   Your account: {base}/dashboard/settings/account/",
        f"  Mail the platform sends (web and workers): {base}/dev/mail/",
        f"  Webhook receiver, an endpoint URL to add: {loopback}/dev/webhooks/demo/",
        f"  API docs: {base}/v1/docs/",
        "  In a second terminal (the README's curl lines read PETSTORE_URL):",
        f"    export PETSTORE_URL={base} PETSTORE_ENV_FILE={local_env}",
        "  API key for the curl below (printed once, on the last line):",
        "    KEY=$(.venv/bin/python manage.py createapikey alice | tail -1)",
        "    curl -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' "
        '-d \'{"name":"Rex","categoryId":1}\' "$PETSTORE_URL/v1/pets"',
        "  Metrics (Prometheus text format; the token is this checkout's, in its settings file):",
        f"    METRICS_TOKEN=$(sed -n 's/^METRICS_TOKEN=//p' {local_env})",
        f'    curl -H "Authorization: Bearer $METRICS_TOKEN" {base}/metrics',
        "  Ctrl-C stops every process.",
    ]


def hints() -> int:
    """Wait until the web process and a worker answer, then print how to use the service,
    last, so Celery's and the web server's start-up lines do not scroll it away. Then stay up:
    honcho stops every process when one ends."""
    django.setup()
    # honcho gives each process a PORT of its own; HTTP_PORT is the web process's.
    port = settings.HTTP_PORT
    os.environ["PORT"] = str(port)  # the sign-in URL loaddomainsdemo prints
    wait_until(f"the web process on port {port}", lambda: web_ready(port))
    wait_until("the Celery worker", worker_ready)
    call_command("loaddomainsdemo")  # idempotent: prints the demo owner's sign-in
    print("\n".join(hint_lines(f"http://localhost:{port}", shown_path(env_file()))))
    sys.stdout.flush()
    threading.Event().wait()
    return 0


ACTIONS: dict[str, Callable[[], int]] = {
    "run": run,
    "localenv": write_local_env,
    "check": check,
    "hints": hints,
}


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
    parser = argparse.ArgumentParser(prog="python -m devtools.devserver")
    parser.add_argument("actions", nargs="+", choices=list(ACTIONS), metavar="action")
    args = parser.parse_args(argv)
    # In order, stopping at the first that fails: `localenv check` writes the file that
    # the settings `check` reads then load.
    for action in args.actions:
        if status := ACTIONS[action]():
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
