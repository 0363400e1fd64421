"""The certificate endpoint Caddy's `get_certificate http` manager asks during a handshake.

    granian --interface wsgi domains.edge.wsgi:application --port $EDGE_CERTIFICATES_PORT

GET /certificate/<secret>?server_name=<SNI> answers 200 with the chain and its
private key in PEM, or 204 when no live domain has that name. Caddy then asks GET
/permission whether it may issue one itself, which is always refused (403), so the
handshake fails. Private keys leave the database only here, in clear only in this
answer. Loopback is not enough (any process of the host, a cron job or an SSRF
reaches it): `manage.py edge` makes a new secret at each start, writes it to
EDGE_DIR/endpoint-secret (0600) and into Caddy's configuration (0600), and any
request without it is refused (403) before the database is read. The endpoint
also binds to loopback and refuses any peer that is not, should it be bound wider.
A plain WSGI callable rather than a Django view: it is on the path of every new
TLS connection, and none of the web stack's middleware applies to it.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import parse_qs

import django
from django.conf import settings
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
django.setup()

from domains.edge.certificates import pem_bundle, served_certificate  # noqa: E402
from domains.edge.paths import CERTIFICATE_PATH, PERMISSION_PATH, SECRET_FILE  # noqa: E402

logger = logging.getLogger(__name__)

StartResponse = Callable[[str, list[tuple[str, str]]], object]


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def edge_secret() -> str:
    """This edge run's secret; empty (nothing is answered) before `manage.py edge` wrote it.
    Read at each request: a few microseconds beside the lookup, and a restarted edge's new
    secret is the only one that works."""
    try:
        return (Path(settings.EDGE_DIR) / SECRET_FILE).read_text().strip()
    except FileNotFoundError:
        return ""


def _has_secret(path: str) -> bool:
    given = path.removeprefix(CERTIFICATE_PATH + "/") if path.startswith(CERTIFICATE_PATH) else ""
    secret = edge_secret()
    # Constant time: the answer's timing must not spell the secret out byte by byte.
    return bool(secret) and hmac.compare_digest(given.encode(), secret.encode())


def _answer(environ: dict) -> tuple[str, bytes]:
    if not _is_loopback(environ.get("REMOTE_ADDR", "")):
        return "403 Forbidden", b""
    path = environ.get("PATH_INFO", "")
    if path == PERMISSION_PATH:
        return "403 Forbidden", b""
    if not path.startswith(CERTIFICATE_PATH) or environ.get("REQUEST_METHOD") != "GET":
        return "404 Not Found", b""
    if not _has_secret(path):
        return "403 Forbidden", b""
    server_name = parse_qs(environ.get("QUERY_STRING", "")).get("server_name", [""])[0]
    certificate = served_certificate(server_name)
    if certificate is None:
        return "204 No Content", b""
    return "200 OK", pem_bundle(certificate)


def application(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
    close_old_connections()
    try:
        status, body = _answer(environ)
    except Exception:
        # Caddy ends the handshake on any error status; the log says why, without the key.
        logger.exception("The edge's certificate lookup failed")
        status, body = "500 Internal Server Error", b""
    finally:
        close_old_connections()
    headers = [("Cache-Control", "no-store"), ("Content-Length", str(len(body)))]
    if body:
        headers.append(("Content-Type", "application/x-pem-file"))
    start_response(status, headers)
    return [body]
