"""Caddy's configuration for the edge, as JSON, from the settings.

HTTPS on HTTPS_PORT, and plain HTTP on HTTP_PORT where EDGE_HTTP says so
(production), both proxied to the web processes (EDGE_UPSTREAMS), which answer
ACME challenges and send plain HTTP on to https themselves. Caddy's own automatic
HTTPS is off (no listeners, redirects or certificates of its own), HTTP/3 is off
(no UDP listener), and the admin API sits on EDGE_ADMIN (a unix socket of the
checkout by default).

Certificates: with EDGE_HELD_CERTIFICATES Caddy holds the live domains' in its memory,
loaded through the admin API (domains/edge/heldcertificates.py; none at start), and it asks the
loopback endpoint (domains/edge/endpoint.py) during a handshake for any name it does not hold:
the automation policy is a catch-all with that manager, whose URL carries the endpoint's
secret (Caddy's http manager sends no header of ours), so this document is written mode
0600. Where it has nothing (204), a second manager gets the edge's placeholder certificate
from the same endpoint (domains/edge/fallback.py), so the handshake completes. Without a
certificate from a manager, Caddy would go on to issue from its own ACME issuers for
whatever name a client sent; its on-demand permission asks the same endpoint, which always
refuses: only the platform, after proving a domain, issues. The platform's own names use
the operator's files (EDGE_PLATFORM_CERTIFICATE), which Caddy loads.

The edge writes the access line of every request, the web processes behind it none
(Procfile.production's WEB_ACCESS_LOG=0; docs/decisions/serving.md): one line on
Caddy's stderr, in LOG_FORMAT, with the request id the web process uses and returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

from domains.edge import admin
from domains.edge.paths import CERTIFICATE_PATH, FALLBACK_PATH, PERMISSION_PATH
from petstore.http.requestid import REQUEST_ID_PATTERN


def endpoint(path: str) -> str:
    return f"http://127.0.0.1:{settings.EDGE_CERTIFICATES_PORT}{path}"


# Connections to the web processes are kept between requests: a new TCP connection per
# request costs the web process more than the request's own parsing. Kept idle at most
# UPSTREAM_IDLE, which must stay below the time the web server lets an idle connection wait
# for its next request (granian closes it after WEB_HEADER_TIMEOUT, 10 s by default), so the
# edge never sends a request on a connection the server is closing. Up to UPSTREAM_IDLE_CONNS
# idle per web process, more than the requests the edge has in flight to one under load.
UPSTREAM_IDLE = "4s"
UPSTREAM_IDLE_CONNS = 64


# The requests the edge may send to a second web process after the first received it
# (Caddy's matcher sets: any one set matches; within a set, every matcher must).
RETRY_MATCH: list[dict[str, Any]] = [
    {"method": ["GET", "HEAD", "OPTIONS"]},
    {"method": ["POST"], "path": ["/v1/*"], "header": {"Idempotency-Key": ["*"]}},
]


# Which web process is taken out of rotation, and by what: only what says the process itself
# is unwell. Caddy's passive checks count every failed request against its upstream, a write
# the web process cut short included, and a client makes those at will: a chunked body the
# app refuses before reading it (petstore/http/earlyanswers.py closes such a connection) would
# take the only web process out for the 5 s they remember it, and every other client would
# wait. So there are none: a process that is gone refuses the connection, which the retries
# above send on to another; one that no longer answers fails the active check, a GET /healthz every
# HEALTH_INTERVAL to each process (answered before any host check, petstore/http/health.py),
# HEALTH_FAILS times in a row, each within HEALTH_TIMEOUT; one answer puts it back. With a
# single web process there is nothing to fail over to, and a check could only turn slow
# answers into 503s: it has none (docs/decisions/edge.md).
HEALTH_INTERVAL = "2s"
HEALTH_TIMEOUT = "5s"
HEALTH_FAILS = 3


def _health_checks() -> dict[str, Any]:
    if len(settings.EDGE_UPSTREAMS) < 2:
        return {}
    active = {
        "uri": "/healthz",
        "interval": HEALTH_INTERVAL,
        "timeout": HEALTH_TIMEOUT,
        "fails": HEALTH_FAILS,
        "passes": 1,
        "expect_status": 200,
    }
    return {"health_checks": {"active": active}}


def _proxy(scheme: str) -> dict[str, Any]:
    return {
        "handler": "reverse_proxy",
        "upstreams": [{"dial": upstream} for upstream in settings.EDGE_UPSTREAMS],
        "transport": {
            "protocol": "http",
            "keep_alive": {
                "enabled": True,
                "idle_timeout": UPSTREAM_IDLE,
                "max_idle_conns_per_host": UPSTREAM_IDLE_CONNS,
            },
        },
        # A web process that is gone (killed, restarting) refuses the connection: the request
        # goes to another within 5 s instead of ending in a 502 (Caddy retries no request by
        # default; a retry may pick the same one again until the health check below takes it
        # out). A failed dial is retried for any method. A request the dead process had
        # received is sent again only if the app makes that safe: a GET, HEAD or OPTIONS, or
        # a POST to the API carrying an Idempotency-Key (petstore/api/idempotency.py answers
        # its retry with the first answer, or 409 while the first attempt commits it). The
        # app keys nothing else: a keyed DELETE, PUT or PATCH is not sent twice.
        "load_balancing": {
            "try_duration": "5s",
            "try_interval": "100ms",
            "retry_match": RETRY_MATCH,
        },
        **_health_checks(),
        # A web worker serves one request at a time on each of its threads: the edge reads
        # a whole request body (up to the largest the app accepts) before passing it on,
        # so a client that sends slowly holds an edge goroutine, not a worker.
        "request_buffers": settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1,
        # Caddy sets it too; said here so the web processes' trust in it is plain to see.
        "headers": {"request": {"set": {"X-Forwarded-Proto": [scheme]}}},
    }


# The request id: a client's own when the app would take it (the same pattern), so a caller
# can trace its request end to end; otherwise (none, a malformed one, two headers) Caddy's
# UUID for the request in its place. The app adopts whatever arrives (it matches), returns it
# in the response and stamps its log lines with it; the access line shows the same.
# REQUEST_ID is the header's value, read when used: after this route, the id chosen.
REQUEST_ID = "{http.request.header.X-Request-ID}"
_SANE_REQUEST_ID = {
    # The placeholder joins repeated headers with commas, which the pattern refuses.
    "match": [{"not": [{"vars_regexp": {REQUEST_ID: {"pattern": f"^{REQUEST_ID_PATTERN}$"}}}]}],
    "handle": [
        {"handler": "headers", "request": {"set": {"X-Request-ID": ["{http.request.uuid}"]}}}
    ],
}


def _server(port: int, scheme: str) -> dict[str, Any]:
    # Under DEBUG (`make run`) the web process answers with tracebacks and trusts the edge
    # as its proxy, so the edge listens on loopback only: the LAN never reaches that server.
    host = "127.0.0.1" if settings.DEBUG else ""
    server: dict[str, Any] = {
        "listen": [f"{host}:{port}"],
        # A client gets this long for its headers and then its body; an idle keep-alive
        # connection is closed after Caddy's default (5 minutes).
        "read_header_timeout": "10s",
        "read_timeout": "30s",
        "protocols": ["h1", "h2"] if scheme == "https" else ["h1"],
        "automatic_https": {"disable": True},
        # Every request's access line (ACCESS_LOGGERS below). Caddy's default, kept: the
        # Authorization, Cookie and Set-Cookie headers' values are written as REDACTED.
        "logs": {},
        "routes": [
            _SANE_REQUEST_ID,
            {
                "handle": [
                    {"handler": "log_append", "key": "request_id", "value": REQUEST_ID},
                    _proxy(scheme),
                ]
            },
        ],
        # A request the web processes never answered (all of them down: 502) still returns
        # its id, as the app's answers do.
        "errors": {
            "routes": [
                {
                    "handle": [
                        {"handler": "headers", "response": {"set": {"X-Request-ID": [REQUEST_ID]}}},
                        {"handler": "static_response", "status_code": "{http.error.status_code}"},
                    ]
                }
            ]
        },
    }
    if scheme == "https":
        server["tls_connection_policies"] = [{}]
    return server


def _tls(secret: str) -> dict[str, Any]:
    manager = {"via": "http", "url": endpoint(f"{CERTIFICATE_PATH}/{secret}")}
    # Asked when the first had none for the name (Caddy tries its managers in order): the
    # placeholder certificate, so the handshake completes rather than ending in an alert.
    fallback = {"via": "http", "url": endpoint(f"{FALLBACK_PATH}/{secret}")}
    # The live certificates Caddy holds: none at start, then what
    # domains/edge/heldcertificates.py loads through the admin API (it replaces this list).
    certificates: dict[str, Any] = {"load_pem": []}
    if settings.EDGE_PLATFORM_CERTIFICATE:
        certificates["load_files"] = [
            {"certificate": settings.EDGE_PLATFORM_CERTIFICATE, "key": settings.EDGE_PLATFORM_KEY}
        ]
    return {
        "automation": {
            "policies": [{"get_certificate": [manager, fallback]}],
            "on_demand": {"permission": {"module": "http", "endpoint": endpoint(PERMISSION_PATH)}},
        },
        "certificates": certificates,
        # Room for every certificate held (Caddy's default is 10,000), and the platform's.
        "cache": {"capacity": max(10_000, settings.EDGE_HELD_CERTIFICATES + 1)},
        # A load would otherwise fetch an OCSP response for each certificate that names a
        # responder, from the CA, before Caddy serves the new set: a Remove would wait on it.
        "disable_ocsp_stapling": True,
    }


# The access lines, what made the edge answer a request itself (http.log.error: the web
# processes' refusal behind a 502; at DEBUG level once an error route answered, so kept here
# whatever the level), and the connections that never made a request: Go's HTTP server reports
# what fails on a connection outside a request, a TLS handshake above all (no certificate for
# the name, a client that gave up), on http.stdlib at DEBUG level, one line each.
ACCESS_LOGGERS = ["http.log.access", "http.log.error", "http.stdlib"]

# Caddy's admin API warns, at every load of held certificates, that a unix socket has no host
# check (none is needed: only the edge's user can open it): its errors only.
ADMIN_LOGGER = "admin"

# What a plain line leaves out of Caddy's entry: the headers (the request id is kept apart),
# the TLS details, and what repeats the request id or says nothing here.
PLAIN_LEAVES_OUT = (
    "request>headers", "request>tls", "request>remote_port", "resp_headers", "bytes_read",
    "user_id", "uuid",
)  # fmt: skip


def _encoder() -> dict[str, Any]:
    """Caddy's lines in LOG_FORMAT, as the web processes' are. json: one object a line, with
    the keys petstore/http/logjson.py uses where Caddy lets them be named. plain: Caddy's
    console line (time, level, logger, message, then the fields as JSON, so nothing a client
    sent can break the line) without the fields in PLAIN_LEAVES_OUT."""
    if settings.LOG_FORMAT == "json":
        return {
            "format": "json",
            "message_key": "message",
            "time_format": "rfc3339_nano",
            "level_format": "upper",
        }
    return {
        "format": "filter",
        "wrap": {"format": "console", "time_format": "wall_milli", "level_format": "upper"},
        "fields": {field: {"filter": "delete"} for field in PLAIN_LEAVES_OUT},
    }


def config(*, data_dir: Path, secret: str) -> dict[str, Any]:
    servers = {"https": _server(settings.HTTPS_PORT, "https")}
    if settings.EDGE_HTTP:
        servers["http"] = _server(settings.HTTP_PORT, "http")
    return {
        # Never saved: the configuration holds the endpoint's secret and the held keys.
        "admin": {"listen": admin.listen(), "config": {"persist": False}},
        "logging": {
            "logs": {
                "default": {
                    "level": "WARN",
                    "exclude": [*ACCESS_LOGGERS, ADMIN_LOGGER],
                    "encoder": _encoder(),
                },
                "access": {"level": "DEBUG", "include": ACCESS_LOGGERS, "encoder": _encoder()},
                "admin": {"level": "ERROR", "include": [ADMIN_LOGGER], "encoder": _encoder()},
            }
        },
        "storage": {"module": "file_system", "root": str(data_dir)},
        "apps": {"http": {"servers": servers}, "tls": _tls(secret)},
    }
