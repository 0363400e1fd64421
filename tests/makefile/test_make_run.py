"""`make run`: what it starts (petstore/Procfile), the settings file it leaves for a second
terminal (var/local.env, with its ports), how it stops when a port is taken, and its hints.

The service under load, started from the same Procfile line: tests/makefile/test_make_run_load.py.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from devtools import localenv
from devtools.devserver import hint_lines, procfile_command, take_run_ports
from petstore.ports import DEFAULT_PORT, MAKE_RUN_HTTPS_PORT
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


def suggested(line: str) -> dict[str, int]:
    """The variables of the `try: make run ...` command a check line ends with."""
    command = line.partition("; try: make run ")[2]
    assert command, line
    return {
        name: int(value) for name, _, value in (word.partition("=") for word in command.split())
    }


def test_a_busy_web_port_is_one_line_with_the_whole_command_and_a_free_port(tmp_path):
    ports = {"HTTPS_PORT": free_port(), "EDGE_CERTIFICATES_PORT": free_port()}
    dns_port = free_udp_and_tcp_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_check(tmp_path, port=port, dns_port=dns_port, **ports)
        assert result.returncode == 1
        assert result.stdout == ""
        [line] = result.stderr.splitlines()
        assert line.startswith(f"make run: port {port} (the web process) is in use; try: ")
        command = suggested(line)
        # Every port of the run again, the taken one replaced by one found free.
        assert command == {**ports, "PORT": command["PORT"], "DOMAINS_DEV_DNS_PORT": dns_port}
        assert list(command) == [
            "PORT", "HTTPS_PORT", "EDGE_CERTIFICATES_PORT", "DOMAINS_DEV_DNS_PORT"
        ]  # fmt: skip
        assert command["PORT"] > port
        with socket.socket() as suggestion:
            suggestion.bind(("0.0.0.0", command["PORT"]))  # noqa: S104 (any address: the port is taken for every one)


def test_a_busy_dns_port_is_one_line_naming_the_port_and_a_free_one(tmp_path):
    # As an mDNS responder holds 5353: a UDP socket on the port, nothing on TCP.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        dns_port = taken.getsockname()[1]
        result = run_check(tmp_path, port=free_port(), dns_port=dns_port)
        assert result.returncode == 1
        [line] = result.stderr.splitlines()
        assert line.startswith(f"make run: port {dns_port} (the development DNS server")
        moved = suggested(line)["DOMAINS_DEV_DNS_PORT"]
        assert moved > dns_port
        for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
            with socket.socket(socket.AF_INET, kind) as suggestion:
                suggestion.bind(("127.0.0.1", moved))


def test_two_busy_ports_are_named_in_one_line_and_both_moved(tmp_path):
    with socket.socket() as web, socket.socket() as edge:
        for taken in (web, edge):
            taken.bind(("127.0.0.1", 0))
            taken.listen()
        port, https_port = web.getsockname()[1], edge.getsockname()[1]
        result = run_check(
            tmp_path, port=port, dns_port=free_udp_and_tcp_port(), HTTPS_PORT=https_port
        )
    [line] = result.stderr.splitlines()
    assert line.startswith(
        f"make run: port {port} (the web process) and port {https_port} (the TLS edge) are in "
        "use; try: make run "
    )
    command = suggested(line)
    assert command["PORT"] != port and command["HTTPS_PORT"] != https_port
    assert len(set(command.values())) == 4  # never one port suggested for two servers


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


def test_make_run_is_one_command_that_checks_its_ports_before_it_starts_anything():
    assert recipe("run") == ["$(RUN_ENV) $(BIN)/python -m devtools.devserver run"]


def test_make_run_takes_the_declared_ports_where_its_command_line_names_none():
    environ: dict[str, str] = {}
    take_run_ports(environ)
    web, https = str(DEFAULT_PORT), str(MAKE_RUN_HTTPS_PORT)
    assert environ == {"PORT": web, "HTTPS_PORT": https, "HTTP_PORT": web}
    # The command line's (make passes it on in the environment); HTTP_PORT always the web's.
    environ = {"PORT": "8123", "HTTPS_PORT": "8444", "HTTP_PORT": "9"}
    take_run_ports(environ)
    assert environ == {"PORT": "8123", "HTTPS_PORT": "8444", "HTTP_PORT": "8123"}


def test_the_makefile_leaves_make_run_s_ports_to_the_declarations():
    text = (ROOT / "Makefile").read_text()
    assert not re.search(rf"\b({DEFAULT_PORT}|{MAKE_RUN_HTTPS_PORT})\b", text)
    assert re.findall(r"^RUN_ENV :=.*$", text, re.MULTILINE) == [
        "RUN_ENV := PETSTORE_ENV_FILE=$(LOCAL_ENV)"
    ]


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
    assert line.startswith(f"make run: port {busy} ({what}) is in use; try: make run PORT=")
    assert suggested(line)[setting] > busy


# What a new terminal has: none of make run's settings, no test services, no make of its own.
NOT_IN_A_NEW_TERMINAL = {
    "SECRET_KEY", "DEBUG", "PETSTORE_ENV_FILE", "PETSTORE_VAR_DIR", "DATABASE_URL", "REDIS_URL",
    "CELERY_BROKER_URL", "DOMAINS_KEY_ENCRYPTION_KEY", "API_BASE_URL", "HTTP_PORT",
    "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "DJANGO_SETTINGS_MODULE", *localenv.PORT_SETTINGS,
}  # fmt: skip


def new_terminal(**env: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in NOT_IN_A_NEW_TERMINAL}
    return {**clean, **env}


def stamp() -> str:
    """The name of `make run`'s install stamp: the tests run in the same virtualenv, so
    `make -o <stamp> run` takes the install step as done."""
    return subprocess.run(
        ["make", "--no-print-directory", "--eval", "stamp-name: ; @echo $(call stamp,run)",
         "stamp-name"],
        cwd=ROOT, env=new_terminal(), capture_output=True, text=True, check=True, timeout=30,
    ).stdout.strip()  # fmt: skip


def make_run(var: Path, **ports: int) -> subprocess.CompletedProcess[str]:
    """`make run PORT=... ...` as typed in the checkout, with its files in `var`, when it
    stops by itself (a port held by the test, another run of the same checkout)."""
    command = ["make", "--no-print-directory", "-o", stamp(), "run"]
    command += [f"{name}={value}" for name, value in ports.items()]
    env = new_terminal(PETSTORE_VAR_DIR=str(var))
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def manage(var: Path, *args: str) -> str:
    """`manage.py` in a second terminal, as Getting started says: PETSTORE_ENV_FILE exported."""
    env = new_terminal(PETSTORE_ENV_FILE=str(var / "local.env"), PETSTORE_VAR_DIR=str(var))
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def read_env_file(path: Path) -> dict[str, str]:
    pairs = [line.partition("=") for line in path.read_text().splitlines()]
    names = [name for name, sep, _ in pairs if sep and not name.startswith("#")]
    assert len(names) == len(set(names)), names  # each setting once
    return {name: value for name, sep, value in pairs if sep and not name.startswith("#")}


def test_a_refused_make_run_leaves_the_settings_file_and_the_servers_alone(tmp_path):
    """A second terminal keeps talking to the run that serves: the refused run's ports never
    reach the file, and it starts no server."""
    var = tmp_path / "var"
    var.mkdir()
    local_env = var / "local.env"
    # As an earlier `make run` left it, with a line of the developer's own.
    before = (
        f"# Development settings for this checkout, written by `make run`.\nDEBUG=1\n"
        f"DOMAINS_KEY_ENCRYPTION_KEY={localenv.token()}\nMETRICS_TOKEN={localenv.token()}\n"
        f"LOG_LEVEL=WARNING\n{localenv.PORTS_COMMENT}\nPORT=8000\nHTTPS_PORT=8443\n"
    )
    local_env.write_text(before)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = make_run(
            var,
            PORT=port,
            HTTPS_PORT=free_port(),
            EDGE_CERTIFICATES_PORT=free_port(),
            DOMAINS_DEV_DNS_PORT=free_udp_and_tcp_port(),
        )
    assert result.returncode != 0
    assert result.stderr.splitlines()[0].startswith(f"make run: port {port} (the web process)")
    assert local_env.read_text() == before
    assert not (var / "postgres").exists()


def test_a_first_make_run_writes_debug_keys_and_a_metrics_token(tmp_path):
    local_env = tmp_path / "var" / "local.env"
    localenv.write(local_env, {"PORT": "8123", "HTTPS_PORT": "8443"})
    written = read_env_file(local_env)
    assert written.keys() == {
        "DEBUG", "DOMAINS_KEY_ENCRYPTION_KEY", "METRICS_TOKEN", "PORT", "HTTPS_PORT",
        "DOMAINS_DNS01_TSIG_KEY_NAME", "DOMAINS_DNS01_TSIG_SECRET",
    }  # fmt: skip
    assert written["DEBUG"] == "1"
    assert written["DOMAINS_KEY_ENCRYPTION_KEY"] != written["METRICS_TOKEN"]
    # The development DNS server's TSIG key: a secret as a DNS server's configuration has it.
    assert len(base64.b64decode(written["DOMAINS_DNS01_TSIG_SECRET"], validate=True)) == 32
    assert local_env.stat().st_mode & 0o777 == 0o600


def test_a_later_run_on_the_default_ports_drops_their_lines_and_keeps_the_rest(tmp_path):
    local_env = tmp_path / "local.env"
    moved = {"PORT": "8001", "HTTPS_PORT": "8444", "DOMAINS_DEV_DNS_PORT": "5354"}
    localenv.write(local_env, moved)
    first = read_env_file(local_env)
    defaults = {"PORT": str(DEFAULT_PORT), "HTTPS_PORT": str(MAKE_RUN_HTTPS_PORT)}
    localenv.write(local_env, defaults)
    assert read_env_file(local_env) == {
        "DEBUG": "1",
        "DOMAINS_KEY_ENCRYPTION_KEY": first["DOMAINS_KEY_ENCRYPTION_KEY"],
        "METRICS_TOKEN": first["METRICS_TOKEN"],
        "DOMAINS_DNS01_TSIG_KEY_NAME": first["DOMAINS_DNS01_TSIG_KEY_NAME"],
        "DOMAINS_DNS01_TSIG_SECRET": first["DOMAINS_DNS01_TSIG_SECRET"],
        **defaults,
    }


def test_the_hints_give_the_metrics_curl_line_with_a_way_to_its_token(tmp_path):
    local_env = tmp_path / "local env"  # a path the shell must have quoted
    localenv.write(local_env, {"PORT": "8123"})
    lines = hint_lines("http://localhost:8123", shlex.quote(str(local_env)))
    assert lines[-1] == "  Ctrl-C stops every process."
    assert (
        lines[-2]
        == '    curl -H "Authorization: Bearer $METRICS_TOKEN" http://localhost:8123/metrics'
    )
    # The line before sets METRICS_TOKEN, as pasted into a shell in the checkout.
    shell = subprocess.run(
        ["bash", "-c", f'{lines[-3].strip()}; printf %s "$METRICS_TOKEN"'],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    assert shell.stdout == read_env_file(local_env)["METRICS_TOKEN"]
