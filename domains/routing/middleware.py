"""Serving by host name: platform subdomains and custom domains, before anything else.

This middleware sits before Django's host validation and reads the raw Host header
itself, so custom domains need not be listed in ALLOWED_HOSTS. Hosts that are the
app's own (localhost, 127.0.0.1, testserver, literal ALLOWED_HOSTS entries, the bare
PLATFORM_DOMAIN) pass through to the normal URLconf; every other host is answered
here from domains.routing.resolver: a project's page, a redirect, or 404. ACME
HTTP-01 challenges (domains/routing/challenges.py) come first of all.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseNotFound,
)

from domains.dns import hostnames
from domains.routing import challenges
from domains.routing.resolver import HostRedirect, Page, resolve

_OWN_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "testserver"})


# A host name (letters, digits, dots, hyphens), an IPv4 address or a bracketed IPv6
# address, and an optional port of digits: nothing else may reach a Location header.
_VALID_HOST = re.compile(r"(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?", re.IGNORECASE)


def raw_host(request: HttpRequest) -> str | None:
    """The Host header's name, lower case, without port or trailing dot; None when the
    header is not a host name with an optional port."""
    host = (request.META.get("HTTP_HOST") or request.META.get("SERVER_NAME", "")).strip()
    if not _VALID_HOST.fullmatch(host):
        return None
    # [::1]:8000 holds its address in brackets; a name or an IPv4 address ends at the colon.
    name = host[1 : host.index("]")] if host.startswith("[") else host.partition(":")[0]
    return hostnames.comparable(name)


def _is_own_host(host: str) -> bool:
    """The Django site's hosts: the bare PLATFORM_DOMAIN, the dashboard's, ALLOWED_HOSTS'
    literal entries (its `.example.com` entries name no host here)."""
    if host in _OWN_HOSTS:
        return True
    own = hostnames.platform_hosts()
    return host in (own.site, own.dashboard) or host in own.allowed


def _origin(scheme: str, host: str) -> str:
    """scheme://host[:port] with the configured port of that scheme (HTTP_PORT,
    HTTPS_PORT), never the port a client's Host header names."""
    port = settings.HTTPS_PORT if scheme == "https" else settings.HTTP_PORT
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{host}" if port == default else f"{scheme}://{host}:{port}"


def _not_found(host: str) -> HttpResponse:
    return HttpResponseNotFound(
        f"No project is published at {host}.\n", content_type="text/plain; charset=utf-8"
    )


def _redirect(request: HttpRequest, host: str, status: int, *, secure: bool) -> HttpResponse:
    """To `host`, keeping path and query; https when the edge serves that host."""
    scheme = "https" if secure else "http"
    response = HttpResponse(status=status)
    response["Location"] = _origin(scheme, host) + request.get_full_path()
    return response


def _page(request: HttpRequest, host: str, page: Page) -> HttpResponse:
    if page.secure and not request.is_secure():
        return _redirect(request, host, 301, secure=True)
    response = HttpResponse(page.deploy.html, content_type="text/html; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    return response


def answer(request: HttpRequest, host: str) -> HttpResponse:
    target = resolve(host)
    if isinstance(target, HostRedirect):
        return _redirect(request, target.host, target.status, secure=target.secure)
    if isinstance(target, Page):
        return _page(request, host, target)
    return _not_found(host)


class HostRoutingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        host = raw_host(request)
        if host is None:
            return HttpResponseBadRequest(
                "Bad Request: the Host header must be a host name with an optional port.\n",
                content_type="text/plain; charset=utf-8",
            )
        challenge = challenges.answer(host, request.path)
        if challenge is not None:
            return challenge
        if _is_own_host(host):
            return self.get_response(request)
        return answer(request, host)
