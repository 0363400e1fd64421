"""Serving by host name: platform subdomains and custom domains, before anything else.

This middleware sits before Django's host validation and reads the raw Host header
itself, so custom domains need not be listed in ALLOWED_HOSTS. Hosts that are the
app's own (localhost, 127.0.0.1, testserver, literal ALLOWED_HOSTS entries, the bare
PLATFORM_DOMAIN) pass through to the normal URLconf; every other host is answered
here from domains.routing.resolver: a project's page, a redirect, or 404.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotFound

from domains.routing.resolver import Page, Redirect, resolve

_OWN_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "testserver"})


def raw_host(request: HttpRequest) -> str:
    host = request.META.get("HTTP_HOST") or request.META.get("SERVER_NAME", "")
    host = host.strip().lower()
    if host.startswith("["):  # [::1]:8000
        host = host[1 : host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def _port_suffix(request: HttpRequest) -> str:
    host = request.META.get("HTTP_HOST", "")
    tail = host.rsplit("]", 1)[-1] if host.startswith("[") else host
    return ":" + tail.rsplit(":", 1)[1] if ":" in tail else ""


def _is_own_host(host: str) -> bool:
    if host in _OWN_HOSTS or host == settings.PLATFORM_DOMAIN.lower():
        return True
    return host in {h.lower() for h in settings.ALLOWED_HOSTS if h not in ("*",)}


def _not_found(host: str) -> HttpResponse:
    return HttpResponseNotFound(
        f"No project is published at {host}.\n", content_type="text/plain; charset=utf-8"
    )


def _redirect(request: HttpRequest, host: str, status: int, *, secure: bool) -> HttpResponse:
    """To `host`, keeping path and query; https when that host has a certificate and this
    request is (or must become) secure."""
    https = secure and (request.is_secure() or settings.SECURE_SSL_REDIRECT)
    scheme = "https" if https else request.scheme
    response = HttpResponse(status=status)
    response["Location"] = f"{scheme}://{host}{_port_suffix(request)}{request.get_full_path()}"
    return response


def _page(request: HttpRequest, host: str, page: Page) -> HttpResponse:
    if page.secure and settings.SECURE_SSL_REDIRECT and not request.is_secure():
        return _redirect(request, host, 301, secure=True)
    response = HttpResponse(page.deploy.html, content_type="text/html; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    return response


def answer(request: HttpRequest, host: str) -> HttpResponse:
    target = resolve(host)
    if isinstance(target, Redirect):
        return _redirect(request, target.host, target.status, secure=target.secure)
    if isinstance(target, Page):
        return _page(request, host, target)
    return _not_found(host)


class HostRoutingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        host = raw_host(request)
        if _is_own_host(host):
            return self.get_response(request)
        return answer(request, host)
