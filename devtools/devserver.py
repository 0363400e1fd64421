"""`make run` around its Procfile: a check that its ports are free before anything starts,
and the hints a newcomer needs, printed once the service answers.

    python -m devtools.devserver check   # one line and exit 1 if PORT or the DNS port is taken
    python -m devtools.devserver hints   # the Procfile's `hints:` process

The Procfile is the one description of how `make run` serves; `procfile_command` reads a
line of it, so a test can start the web process exactly as `make run` does.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import django
from django.conf import settings
from django.core.management import call_command

from devtools.sockets import PortInUseError, bind_udp_and_tcp
from petstore.celery import app

PROCFILE = Path(__file__).resolve().parent.parent / "petstore" / "Procfile"
DEFAULT_PORT = 8000
# How long `hints` waits for the web process and the worker before saying so.
READY_TIMEOUT = 120.0


def procfile_command(name: str, procfile: Path = PROCFILE) -> str:
    """The shell command of the Procfile's process `name` (e.g. "web")."""
    for line in procfile.read_text().splitlines():
        process, sep, command = line.partition(":")
        if sep and process.strip() == name and not process.lstrip().startswith("#"):
            return command.strip()
    raise KeyError(f"{procfile} has no {name!r} process")


def web_port() -> int:
    """The port `make run` serves on: PORT, as the Makefile passes it to `check`."""
    return int(os.environ.get("PORT") or DEFAULT_PORT)


def tcp_port_in_use(port: int, host: str = "0.0.0.0") -> bool:  # noqa: S104 (gunicorn's bind)
    """Whether a server could not listen on (host, port), tried as gunicorn binds it."""
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


def busy_port_message() -> str | None:
    """The one line `make run` stops with when one of its ports is taken, else None."""
    port = web_port()
    if tcp_port_in_use(port):
        return (
            f"make run: port {port} is in use; set PORT to a free one "
            f"(make run PORT={port + 1000 if port < 64535 else 9000})"
        )
    for setting, host, what in (
        ("HTTPS_PORT", "0.0.0.0", "the TLS edge"),  # noqa: S104 (Caddy's bind)
        ("EDGE_CERTIFICATES_PORT", "127.0.0.1", "the edge's certificate endpoint"),
    ):
        taken = getattr(settings, setting)
        if tcp_port_in_use(taken, host):
            return (
                f"make run: port {taken} ({what}) is in use; set {setting} to a free one "
                f"(make run {setting}={taken + 1})"
            )
    dns_port = settings.DOMAINS_DEV_DNS_PORT
    if dns_port_in_use(dns_port):
        return (
            f"make run: port {dns_port} (the development DNS server, UDP and TCP; 5353 is "
            "also mDNS) is in use; set DOMAINS_DEV_DNS_PORT to a free one "
            f"(make run DOMAINS_DEV_DNS_PORT={dns_port + 1})"
        )
    return None


def check() -> int:
    message = busy_port_message()
    if message:
        print(message, file=sys.stderr)
        return 1
    return 0


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


def hints() -> int:
    """Wait until the web process and a worker answer, then print how to use the service,
    last, so Celery's and gunicorn's start-up lines do not scroll it away. Then stay up:
    honcho stops every process when one ends."""
    django.setup()
    # honcho gives each process a PORT of its own; HTTP_PORT is the web process's.
    port = settings.HTTP_PORT
    os.environ["PORT"] = str(port)  # the sign-in URL loaddomainsdemo prints
    wait_until(f"the web process on port {port}", lambda: web_ready(port))
    wait_until("the Celery worker", worker_ready)
    base = f"http://localhost:{port}"
    call_command("loaddomainsdemo")  # idempotent: prints the demo owner's sign-in
    print(f"  Dashboard: {base}/dashboard/   API docs: {base}/v1/docs/")
    print("  API key for the curl below (printed once, on the last line):")
    # The development settings travel with the command: a new terminal has none.
    print(
        "    KEY=$(PETSTORE_ENV_FILE=var/local.env .venv/bin/python manage.py createapikey alice"
        " | tail -1)"
    )
    print(
        f"    curl -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' "
        f'-d \'{{"name":"Rex","categoryId":1}}\' {base}/v1/pets'
    )
    print("  Ctrl-C stops every process.")
    sys.stdout.flush()
    threading.Event().wait()
    return 0


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
    parser = argparse.ArgumentParser(prog="python -m devtools.devserver")
    parser.add_argument("action", choices=["check", "hints"])
    args = parser.parse_args(argv)
    return check() if args.action == "check" else hints()


if __name__ == "__main__":
    sys.exit(main())
