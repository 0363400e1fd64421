"""The certificate endpoint Caddy's `get_certificate http` manager asks during a handshake.

    granian --interface wsgi domains.edge.endpoint:application --port $EDGE_CERTIFICATES_PORT

GET /certificate/<secret>?server_name=<SNI> answers 200 with the chain and its
private key in PEM, or 204 when no live domain has that name. Caddy then asks its next
manager, GET /fallback/<secret>, which answers the edge's placeholder certificate
(domains/edge/fallback.py): the handshake completes with a certificate no client trusts
and names no real host, instead of a TLS alert, and the request that follows gets the
web process's plain answer for the name. GET /permission, which Caddy would ask before
issuing one itself, is always refused (403). Private keys leave the database only here,
in clear only in this process's memory and its answers. Loopback is not enough (any
process of the host, a cron job or an SSRF reaches it): `manage.py edge` makes a new
secret at each start, writes it to EDGE_DIR/endpoint-secret (0600) and into Caddy's
configuration (0600), and any request without it is refused (403) before the database
is read. The endpoint also binds to loopback and refuses any peer that is not, should
it be bound wider. A plain WSGI callable rather than a Django view: it is on the path of every new
TLS connection, and none of the web stack's middleware applies to it. Its answers and
its secret are kept in the process (domains/edge/cache.py): a handshake for a name whose
rows did not change reads no row, decrypts nothing and opens no file.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from collections.abc import Callable, Iterable
from urllib.parse import parse_qs

import django
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "petstore.settings")
django.setup()

from domains.edge.cache import CertificateCache  # noqa: E402
from domains.edge.fallback import fallback_bundle  # noqa: E402
from domains.edge.paths import CERTIFICATE_PATH, FALLBACK_PATH, PERMISSION_PATH  # noqa: E402
from domains.metrics import edge_lookup_metrics  # noqa: E402

logger = logging.getLogger(__name__)

StartResponse = Callable[[str, list[tuple[str, str]]], object]


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


class Endpoint:
    """The WSGI application over one cache. `polling`: a thread keeps the cache fresh (the
    served endpoint); without it, a request reads what is stale itself (tests, which then
    call `cache.refresh()` for the thread's beat)."""

    def __init__(self, cache: CertificateCache, *, polling: bool) -> None:
        self.cache = cache
        self.polling = polling

    def _has_secret(self, path: str, under: str) -> bool:
        prefix = under + "/"
        given = path.removeprefix(prefix) if path.startswith(prefix) else ""
        secret = self.cache.secret()
        # Constant time: the answer's timing must not spell the secret out byte by byte.
        return bool(secret) and hmac.compare_digest(given.encode(), secret.encode())

    def _answer(self, environ: dict) -> tuple[str, bytes]:
        if not _is_loopback(environ.get("REMOTE_ADDR", "")):
            return "403 Forbidden", b""
        path = environ.get("PATH_INFO", "")
        if path == PERMISSION_PATH:
            return "403 Forbidden", b""
        under = next((p for p in (CERTIFICATE_PATH, FALLBACK_PATH) if path.startswith(p)), "")
        if not under or environ.get("REQUEST_METHOD") != "GET":
            return "404 Not Found", b""
        if not self._has_secret(path, under):
            return "403 Forbidden", b""
        if under == FALLBACK_PATH:
            return "200 OK", fallback_bundle()
        server_name = parse_qs(environ.get("QUERY_STRING", "")).get("server_name", [""])[0]
        bundle = self.cache.answer(server_name).bundle
        if bundle is None:
            return "204 No Content", b""
        return "200 OK", bundle

    def __call__(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        if self.polling:
            self.cache.keep_fresh()
        close_old_connections()
        try:
            status, body = self._answer(environ)
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


endpoint = Endpoint(CertificateCache(), polling=True)
# Counted and timed around the cache, so a lookup the cache answers counts as one too. The
# placeholder is asked after a lookup that found none (counted then): not a lookup of its own.
counted = edge_lookup_metrics(endpoint)


def application(environ: dict, start_response: StartResponse) -> Iterable[bytes]:
    if environ.get("PATH_INFO", "").startswith(FALLBACK_PATH):
        return endpoint(environ, start_response)
    return counted(environ, start_response)
