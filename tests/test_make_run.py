"""`make run`: what it starts (petstore/Procfile) and how it stops when a port is taken.

The service under load, started from the same Procfile line: tests/test_make_run_load.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from devtools.devserver import procfile_command
from tests.processes import ROOT, free_port


def run_check(
    tmp_path: Path, *, port: int, dns_port: int, **ports: int
) -> subprocess.CompletedProcess[str]:
    """`make run`'s first step, on this port and development DNS port (and the edge's
    HTTPS_PORT and EDGE_CERTIFICATES_PORT, free ones unless given)."""
    env = os.environ.copy()
    env.update(
        {
            "PORT": str(port),
            "DOMAINS_DEV_DNS_PORT": str(dns_port),
            "HTTPS_PORT": str(ports.get("HTTPS_PORT") or free_port()),
            "EDGE_CERTIFICATES_PORT": str(ports.get("EDGE_CERTIFICATES_PORT") or free_port()),
            "DEBUG": "1",
            "PETSTORE_ENV_FILE": "",
            "PETSTORE_VAR_DIR": str(tmp_path / "var"),
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "devtools.devserver", "check"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def free_udp_and_tcp_port() -> int:
    """A port free on both transports of 127.0.0.1, as the development DNS server needs."""
    while True:
        port = free_port()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            try:
                udp.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


def test_free_ports_pass_the_check(tmp_path):
    result = run_check(tmp_path, port=free_port(), dns_port=free_udp_and_tcp_port())
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_a_busy_web_port_is_one_line_naming_the_port_and_PORT(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_check(tmp_path, port=port, dns_port=free_udp_and_tcp_port())
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(
        f"make run: port {port} is in use; set PORT to a free one (make run PORT="
    )


def test_a_busy_dns_port_is_one_line_naming_the_port_and_its_variable(tmp_path):
    # As an mDNS responder holds 5353: a UDP socket on the port, nothing on TCP.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        dns_port = taken.getsockname()[1]
        result = run_check(tmp_path, port=free_port(), dns_port=dns_port)
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"make run: port {dns_port} (the development DNS server")
    assert line.endswith(
        f"set DOMAINS_DEV_DNS_PORT to a free one (make run DOMAINS_DEV_DNS_PORT={dns_port + 1})"
    )


def recipe(target: str) -> list[str]:
    """The recipe lines of a Makefile target, as written."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"{target}:")))
    body = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        body.append(line.strip())
    return body


def test_make_run_checks_its_ports_before_it_starts_anything():
    steps = recipe("run")
    assert "devtools.devserver check" in steps[0]
    assert "honcho" in steps[-1]


def test_make_run_serves_with_production_s_web_server():
    # petstore/webserver.py: granian, loopback only by default (the LAN never sees DEBUG),
    # forwarded headers left to the app (tests/petstore/test_webserver.py).
    assert procfile_command("web") == "python -m petstore.webserver"


def test_the_hints_come_from_a_process_of_their_own_and_the_worker_is_quiet():
    assert procfile_command("hints") == "python -m devtools.devserver hints"
    assert "--quiet" in procfile_command("worker").split()
    assert "--quiet" in procfile_command("certificates").split()


def test_make_run_starts_a_worker_for_checks_and_another_for_certificates(settings):
    """A check waiting on a silent name server never sits in front of a certificate."""
    consumed = {}
    for name in ("worker", "certificates", "webhooks"):
        command = procfile_command(name).split()
        consumed[name] = command[command.index("-Q") + 1]
    assert consumed == {
        "worker": settings.CHECKS_QUEUE,
        "certificates": settings.CERTIFICATES_QUEUE,
        "webhooks": settings.WEBHOOKS_QUEUE,
    }


def test_an_unknown_process_is_named():
    with pytest.raises(KeyError, match="'nosuch'"):
        procfile_command("nosuch")


@pytest.mark.parametrize(
    ("setting", "what"),
    [("HTTPS_PORT", "the TLS edge"), ("EDGE_CERTIFICATES_PORT", "the edge's certificate endpoint")],
)
def test_a_busy_edge_port_is_one_line_naming_its_variable(tmp_path, setting, what):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        result = run_check(
            tmp_path, port=free_port(), dns_port=free_udp_and_tcp_port(), **{setting: busy}
        )
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line == (
        f"make run: port {busy} ({what}) is in use; set {setting} to a free one "
        f"(make run {setting}={busy + 1})"
    )
