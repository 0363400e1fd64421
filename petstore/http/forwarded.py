"""X-Forwarded-* headers count only when a trusted proxy sent them.

The edge (or any TLS-terminating proxy) tells the app who the client is and whether it came
over HTTPS: X-Forwarded-For and X-Forwarded-Proto. A client that reaches the web process
directly can send the same headers, pick a new address for every request (and so escape the
sign-in and API limits) or claim HTTPS. So the first middleware removes every forwarded
header (`X-Forwarded-*`, RFC 7239's `Forwarded`) from request.META unless the immediate peer,
REMOTE_ADDR, is in TRUSTED_PROXIES. Everything after it reads request.META as left here:
SecurityMiddleware and request.is_secure() (SECURE_PROXY_SSL_HEADER),
petstore.http.clientaddress (django-axes, the API's throttles), CSRF's origin checks.

The WSGI server must not decide the client or the scheme from these headers on its own:
granian (petstore/webserver.py) takes both from the connection, so the app is the one place
that trusts a proxy (docs/decisions/serving.md).
"""

from __future__ import annotations

import ipaddress
import logging
import threading
from collections.abc import Callable, Sequence

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from petstore.env import IPNetwork

log = logging.getLogger(__name__)

FORWARDED_PREFIX = "HTTP_X_FORWARDED_"
FORWARDED = "HTTP_FORWARDED"


def is_trusted_proxy(address: str, proxies: Sequence[IPNetwork]) -> bool:
    """Whether `address` (a REMOTE_ADDR) is in one of `proxies`. No address (a unix socket)
    or one that does not parse is not a proxy. An IPv4 peer seen on a dual-stack socket
    (`::ffff:127.0.0.1`) is its IPv4 address."""
    try:
        peer = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped:
        peer = peer.ipv4_mapped
    return any(peer in network for network in proxies)


def forwarded_headers(meta: dict) -> list[str]:
    return [key for key in meta if key.startswith(FORWARDED_PREFIX) or key == FORWARDED]


class ForwardedHeadersMiddleware:
    """First in MIDDLEWARE: forwarded headers from a peer that is not a proxy are dropped."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        peer = request.META.get("REMOTE_ADDR", "")
        if not is_trusted_proxy(peer, settings.TRUSTED_PROXIES):
            dropped = forwarded_headers(request.META)
            for key in dropped:
                del request.META[key]
            if dropped:
                warn_forwarded_from_untrusted_peer(peer)
        return self.get_response(request)


# Set once the warning below was logged: once per process, whoever the peers are.
untrusted_peer_warned = threading.Event()


def warn_forwarded_from_untrusted_peer(peer: str) -> None:
    """A client forging the headers is answered as itself; but if the peer is the operator's
    own proxy, TRUSTED_PROXIES misses it: every client counts at the proxy's address, and
    HTTPS through it looks like plain HTTP (the app answers with a redirect to https)."""
    if untrusted_peer_warned.is_set():
        return
    untrusted_peer_warned.set()
    log.warning(
        "Ignored X-Forwarded-* headers from %s, which is not in TRUSTED_PROXIES (logged once "
        "per process). If that is the proxy in front of the app, add its address to "
        "TRUSTED_PROXIES.",
        peer,
    )
