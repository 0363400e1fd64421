"""The TLS edge (Caddy, domains/edge/): its upstreams, endpoint, admin socket and the
platform's own certificate."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from petstore.env import Section
from petstore.settings.core import DEBUG, DEFAULT_PORT, VAR_DIR
from petstore.settings.domains import HTTP_PORT

env = Section("The TLS edge")
EDGE_UPSTREAMS = env.list(
    "EDGE_UPSTREAMS",
    f"127.0.0.1:{HTTP_PORT}" if DEBUG else f"127.0.0.1:{DEFAULT_PORT}",
    "The web processes the edge sends requests to, comma-separated `host:port`.",
    shown=f"`127.0.0.1:{DEFAULT_PORT}` (DEBUG: `127.0.0.1:<HTTP_PORT>`)",
    example=f"127.0.0.1:{DEFAULT_PORT}",
)
EDGE_CERTIFICATES_PORT = env.integer(
    "EDGE_CERTIFICATES_PORT",
    8442,
    "The loopback endpoint Caddy asks for a handshake's certificate it does not hold.",
    example="8442",
)
# Never a TCP address: it would hand any process of the host Caddy's configuration, with the
# endpoint's secret and the keys Caddy holds (domains/edge/admin.py).
EDGE_DIR = VAR_DIR / "edge"
EDGE_ADMIN = env.text(
    "EDGE_ADMIN",
    f"unix/{EDGE_DIR / 'admin.sock'}",
    "Caddy's admin API: a unix socket only (`unix/PATH`, made 0600).",
    shown="`unix/var/edge/admin.sock`",
)
# Each change of the set reloads Caddy, which closes every idle kept-alive connection (a
# request racing the close is lost) and parses them all again: a few thousand keep a
# Remove's certificate gone within a second (docs/decisions/edge.md).
EDGE_HELD_CERTIFICATES = env.integer(
    "EDGE_HELD_CERTIFICATES",
    0,
    "How many live domains' certificates Caddy holds in memory (their full handshakes ask "
    "nobody); each change reloads Caddy and closes idle kept-alive connections. 0: none.",
)
if EDGE_HELD_CERTIFICATES < 0:
    raise ImproperlyConfigured("EDGE_HELD_CERTIFICATES must be 0 or more")
# Each answer kept is a chain and its key: with a bound, a process's memory does not grow with
# the live domains, and a name past it costs its handshake one indexed read (what each costs:
# docs/decisions/edge.md, At 100,000 certificates).
EDGE_CACHED_CERTIFICATES = env.integer(
    "EDGE_CACHED_CERTIFICATES",
    10_000,
    "How many names' certificates each certificate endpoint process keeps in memory, the "
    "least recently asked dropped first (a name past them is read from the database).",
)
if EDGE_CACHED_CERTIFICATES < 1:
    raise ImproperlyConfigured("EDGE_CACHED_CERTIFICATES must be 1 or more")
# Production: port 80, where ACME HTTP-01 challenges arrive and browsers are sent on to
# https. `make run`: HTTPS_PORT only, as the web process itself serves HTTP on PORT.
EDGE_HTTP = env.flag(
    "EDGE_HTTP",
    not DEBUG,
    "The edge also takes plain HTTP on `HTTP_PORT` (ACME challenges, the way on to https).",
    shown="on (DEBUG: off)",
)
EDGE_PLATFORM_CERTIFICATE = env.text(
    "EDGE_PLATFORM_CERTIFICATE",
    "",
    "The operator's own certificate chain file for the platform's names (`DASHBOARD_HOST`, "
    "`*.PLATFORM_DOMAIN`), loaded at start; empty: with DNS-01 on (`DOMAINS_DNS01_SERVER`) the "
    "platform issues and renews its own wildcard, else the edge serves custom domains only.",
    example="",
)
EDGE_PLATFORM_KEY = env.text("EDGE_PLATFORM_KEY", "", "That certificate's key file.", example="")
