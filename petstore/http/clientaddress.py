"""Which address a request came from, behind as many trusted proxies as NUM_PROXIES says.

X-Forwarded-For is here only when the immediate peer is in TRUSTED_PROXIES: from any other
peer petstore.http.forwarded dropped it before this runs, and the peer is the client.
"""

from __future__ import annotations

import functools
import logging

from django.conf import settings
from django.http import HttpRequest

log = logging.getLogger(__name__)


def client_address(request: HttpRequest) -> str:
    """REMOTE_ADDR, or the address the trusted proxies saw (settings.NUM_PROXIES): of the
    hops they appended to X-Forwarded-For, the one the outermost proxy appended."""
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    proxies = settings.NUM_PROXIES
    if forwarded and proxies:
        hops = [hop.strip() for hop in forwarded.split(",")]
        return hops[-min(proxies, len(hops))]
    if forwarded:
        warn_forwarded_without_proxies()
    return request.META.get("REMOTE_ADDR", "")


@functools.cache
def warn_forwarded_without_proxies() -> None:
    """Once per process: a proxy is in front (it added X-Forwarded-For) but NUM_PROXIES
    counts none, so every client shares the proxy's address and its limits. Only a request
    can show this; `manage.py check --deploy` warns about the setting alone."""
    log.warning(
        "A request arrived with X-Forwarded-For but NUM_PROXIES=0: every client is counted "
        "at the proxy's address, so one client's failed sign-ins and API rate limit lock "
        "out all of them. Set NUM_PROXIES to the number of proxies in front of the app."
    )
