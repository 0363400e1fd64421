"""Which address a request came from, behind as many trusted proxies as NUM_PROXIES says."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """REMOTE_ADDR, or the address the trusted proxies saw (settings.NUM_PROXIES)."""
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    proxies = settings.NUM_PROXIES
    if forwarded and proxies:
        hops = [hop.strip() for hop in forwarded.split(",")]
        return hops[-min(proxies, len(hops))]
    return request.META.get("REMOTE_ADDR", "")
