"""Serving by host name: platform subdomains and custom domains, before anything else.

This middleware sits first in MIDDLEWARE and reads the raw Host header itself,
so custom domains need not be listed in ALLOWED_HOSTS. Hosts that are the
app's own (localhost, 127.0.0.1, testserver, literal ALLOWED_HOSTS entries,
the bare PLATFORM_DOMAIN) pass through to the normal URLconf; every other host
is answered here: a project's page, a redirect, or 404. Nothing is cached, so
a removed domain answers 404 on the very next request.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse, HttpResponseNotFound

from domains.choices import State
from domains.models import Domain, Project

_OWN_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "testserver"})


def raw_host(request) -> str:
    host = request.META.get("HTTP_HOST") or request.META.get("SERVER_NAME", "")
    host = host.strip().lower()
    if host.startswith("["):  # [::1]:8000
        host = host[1 : host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def _port_suffix(request) -> str:
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


def _scheme(request, has_certificate: bool) -> str:
    """https when the target has a certificate and this request is (or must be) secure."""
    if has_certificate and (request.is_secure() or settings.SECURE_SSL_REDIRECT):
        return "https"
    return request.scheme


def _redirect(request, host: str, status: int, *, has_certificate: bool) -> HttpResponse:
    response = HttpResponse(status=status)
    scheme = _scheme(request, has_certificate)
    response["Location"] = f"{scheme}://{host}{_port_suffix(request)}{request.get_full_path()}"
    return response


def _upgrade(request, host: str, has_certificate: bool) -> HttpResponse | None:
    """SECURE_SSL_REDIRECT applies to hosts that have a certificate to serve HTTPS with."""
    if has_certificate and settings.SECURE_SSL_REDIRECT and not request.is_secure():
        return _redirect(request, host, 301, has_certificate=True)
    return None


def _page(project: Project, host: str) -> HttpResponse:
    deploy = project.latest_deploy
    if deploy is None:
        return _not_found(host)
    response = HttpResponse(deploy.html, content_type="text/html; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    return response


def answer(request, host: str) -> HttpResponse:
    platform = settings.PLATFORM_DOMAIN.lower()
    if host.endswith("." + platform):
        slug = host[: -len(platform) - 1]
        project = (
            Project.objects.select_related("primary_domain").filter(slug=slug).first()
            if "." not in slug
            else None
        )
        if project is None:
            return _not_found(host)
        primary = project.primary_domain
        if primary is not None and primary.state == State.ACTIVE:
            return _redirect(request, primary.hostname, 301, has_certificate=True)
        # The platform's own subdomains are covered by the platform's wildcard certificate.
        return _upgrade(request, host, True) or _page(project, host)
    domain = (
        Domain.objects.live()
        .select_related("project", "redirect_from__to_domain")
        .filter(hostname=host)
        .first()
    )
    if domain is None:
        return _not_found(host)
    redirect = getattr(domain, "redirect_from", None)
    if redirect is not None:
        target = redirect.to_domain
        return _redirect(
            request, target.hostname, redirect.status, has_certificate=target.state == State.ACTIVE
        )
    return _upgrade(request, host, domain.state == State.ACTIVE) or _page(domain.project, host)


class HostRoutingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        host = raw_host(request)
        if _is_own_host(host):
            return self.get_response(request)
        return answer(request, host)
