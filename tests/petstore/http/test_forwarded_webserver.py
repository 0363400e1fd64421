"""Procfile.production's web line, run as a process manager runs it, with the edge at one
loopback address (TRUSTED_PROXIES) and a client reaching the web server's port from another.

The client sits at 127.0.0.1, the address a server trusting loopback proxies would believe
X-Forwarded-* from on its own: granian takes the peer and the scheme from the connection
only, so the app is what decides.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from devtools.processes import spawn, stop_group
from tests.processes import ROOT, free_port, service_env, wait_for

EDGE = "127.0.0.2"
STRANGER = "127.0.0.1"


def production_web_line() -> str:
    lines = (ROOT / "Procfile.production").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines)["web"]


@contextlib.contextmanager
def production_web(env: dict[str, str], tmp_path: Path) -> Iterator[int]:
    port = free_port()
    env = {
        **env,
        "PORT": str(port),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    }
    log_path = tmp_path / "web.log"
    process = spawn(["/bin/sh", "-c", "exec " + production_web_line()], env=env, log_path=log_path)

    def up() -> bool:
        if process.poll() is not None:
            pytest.fail("the web process exited:\n" + log_path.read_text(errors="replace")[-3000:])
        try:
            return call(port, STRANGER, "GET", "/healthz")[0] == 200
        except OSError:
            return False

    try:
        wait_for(up, timeout=60, what="Procfile.production's web process")
        yield port
    finally:
        stop_group(process)


def call(
    port: int, source: str, method: str, path: str, headers: dict | None = None, body: str = ""
) -> tuple[int, http.client.HTTPMessage, str]:
    """One request to 127.0.0.1:port from the loopback address `source`."""
    connection = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=10, source_address=(source, 0)
    )
    try:
        connection.request(method, path, body or None, {"Host": "localhost", **(headers or {})})
        response = connection.getresponse()
        return response.status, response.headers, response.read().decode()
    finally:
        connection.close()


def admin_sign_in(port: int, source: str, forwarded_for: str, username: str) -> int:
    """The admin's form, then a wrong password with its CSRF token, as a browser would."""
    _, headers, page = call(port, source, "GET", "/admin/login/?next=/admin/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    cookie = re.search(r"csrftoken=([^;]+)", headers["Set-Cookie"] or "")
    assert token and cookie, page[:500]
    status, _, _ = call(
        port,
        source,
        "POST",
        "/admin/login/?next=/admin/",
        {
            "Cookie": f"csrftoken={cookie.group(1)}",
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Forwarded-For": forwarded_for,
        },
        urlencode(
            {"username": username, "password": "wrong", "csrfmiddlewaretoken": token.group(1)}
        ),
    )
    return status


def test_only_the_trusted_proxy_is_believed_by_the_production_web_process(
    transactional_db, settings, tmp_path
):
    env = service_env(
        settings,
        NUM_PROXIES="1",
        TRUSTED_PROXIES=EDGE,
        SIGNIN_MAX_ATTEMPTS="5",
        SIGNIN_MAX_ATTEMPTS_PER_ADDRESS="8",
    )
    with production_web(env, tmp_path) as port:
        # A client at the port itself rotates X-Forwarded-For: limited at its own address.
        direct = [admin_sign_in(port, STRANGER, f"198.51.100.{n}", "carol") for n in range(25)]
        assert direct == [200] * 4 + [429] * 21

        # Through the edge, every forwarded client is counted on its own: counted at the
        # edge's address, the fifth would be refused (5 per name and address), the ninth at
        # the latest (8 per address). Ten, not more: each is a wrong password the server
        # hashes, most of a second's CPU.
        proxied = [admin_sign_in(port, EDGE, f"192.0.2.{n}", "dave") for n in range(10)]
        assert proxied == [200] * 10

        # X-Forwarded-Proto: https makes the request secure (HSTS) only through the edge.
        claim = {"X-Forwarded-Proto": "https"}
        _, headers, _ = call(port, STRANGER, "GET", "/accounts/login/", claim)
        assert headers["Strict-Transport-Security"] is None
        _, headers, _ = call(port, EDGE, "GET", "/accounts/login/", claim)
        assert headers["Strict-Transport-Security"].startswith("max-age=31536000")
