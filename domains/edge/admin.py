"""Caddy's admin API, as the edge speaks to it: over EDGE_ADMIN, a unix socket only.

Caddy's running configuration holds the endpoint's secret and, once it holds certificates
(domains/edge/heldcertificates.py), their private keys; its admin API hands either to whoever asks
(`GET /config/`). A TCP address answers every process of the host, so the edge refuses one
(`socket_path`), and Caddy makes the socket mode 0600 (`listen`): only the edge's user
reaches it.
"""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

from django.conf import settings

UNIX = "unix/"
# How long one call may take: a load of every held certificate is well under a second
# (docs/decisions/edge.md); a Caddy that takes longer is treated as one that does not answer.
TIMEOUT = 10.0


class AdminError(Exception):
    """Caddy's admin API did not do what was asked (the message says why)."""


class Unreachable(AdminError):
    """Caddy's admin API could not be reached, or did not answer in time."""


class Refused(AdminError):
    """Caddy answered the call with an error (its own message)."""


def socket_path() -> str:
    """The admin socket's path, from EDGE_ADMIN; ValueError naming what to change when it is
    not a unix socket."""
    address = settings.EDGE_ADMIN
    if not address.startswith(UNIX):
        raise ValueError(
            f"EDGE_ADMIN is {address!r}: Caddy's admin API hands its configuration (the "
            "endpoint's secret, the certificates' keys) to whoever connects, so the edge "
            f"takes a unix socket only ({UNIX}PATH)"
        )
    return address.removeprefix(UNIX).split("|", 1)[0]


def listen() -> str:
    """EDGE_ADMIN as Caddy's admin `listen`: the socket made 0600 by Caddy itself."""
    return f"{UNIX}{socket_path()}|0600"


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=TIMEOUT)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def call(method: str, path: str, value: Any = None) -> Any:
    """One call to the admin API: its JSON answer (None when empty)."""
    connection = _UnixConnection(socket_path())
    body = None if value is None else json.dumps(value).encode()
    try:
        connection.request(method, path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = response.read()
    except OSError as error:
        raise Unreachable(f"Caddy's admin API did not answer: {error}") from error
    finally:
        connection.close()
    if response.status >= 300:
        raise Refused(f"Caddy refused {method} {path}: {answer.decode(errors='replace')}")
    return json.loads(answer) if answer.strip() else None
