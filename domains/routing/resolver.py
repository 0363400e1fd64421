"""Which answer a host name gets: a project's page, a redirect to another host, or nothing.

Resolving a host is kept apart from HTTP (domains/routing/middleware.py turns the
answer into a response): it reads the rows as they are now and caches nothing, so
a removed domain has no answer from the very next request on.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Case, Exists, OuterRef, Q, Value, When

from domains.choices import State
from domains.dns import hostnames
from domains.models import Deploy, Domain, Project, ProvenHostname


@dataclass(frozen=True)
class Page:
    """Serve this deploy's page; `secure` when the edge serves the host over HTTPS, so a
    plain HTTP request is sent there."""

    deploy: Deploy
    secure: bool


@dataclass(frozen=True)
class HostRedirect:
    """Send the client to `host` (a Redirect row's target, or a project's primary domain);
    `secure` when the edge serves that host over HTTPS."""

    host: str
    status: int
    secure: bool


Target = Page | HostRedirect | None


def resolve(host: str) -> Target:
    """The answer for `host` (`hostnames.comparable`, without a port); None: nothing here."""
    platform = hostnames.comparable(settings.PLATFORM_DOMAIN)
    if host.endswith("." + platform):
        return _platform_subdomain(host[: -len(platform) - 1])
    return _custom_domain(host)


def _platform_subdomain(slug: str) -> Target:
    if "." in slug:
        return None
    project = Project.objects.select_related("primary_domain").filter(slug=slug).first()
    if project is None:
        return None
    primary = project.primary_domain
    if primary is not None and primary.state == State.ACTIVE:
        return HostRedirect(primary.hostname, 301, secure=True)
    # The platform's own subdomains are served over HTTPS where the platform's wildcard
    # certificate is at the edge (production, SECURE_SSL_REDIRECT), not under `make run`.
    return _page(project, secure=settings.SECURE_SSL_REDIRECT)


def _custom_domain(host: str) -> Target:
    # The name itself, else the live wildcard one label above it: as the edge picks a
    # certificate (domains/edge/certificates.py), another project's more specific name wins.
    wildcard = hostnames.covering_wildcard(host)
    names = [host] if wildcard is None else [host, wildcard]
    exact_first = Case(When(hostname=host, then=Value(0)), default=Value(1))
    proven_by_another = ProvenHostname.objects.filter(hostname=host).exclude(
        project_id=OuterRef("project_id")
    )
    domain = (
        Domain.objects.live()
        .select_related("project", "redirect_from__to_domain")
        .filter(hostname__in=names)
        .exclude(Q(hostname=wildcard) & Exists(proven_by_another))
        .order_by(exact_first)
        .first()
    )
    if domain is None:
        return None
    redirect = getattr(domain, "redirect_from", None)
    # A redirect to a name that is not served here (lost to another project, stopped
    # serving) is paused: the visitor gets this domain's own page, never a trip to a
    # name that may be somebody else's now (docs/decisions/domains.md, "Redirects").
    if redirect is not None and redirect.to_domain.is_live:
        target = redirect.to_domain
        return HostRedirect(target.hostname, redirect.status, secure=target.state == State.ACTIVE)
    return _page(domain.project, secure=domain.state == State.ACTIVE)


def _page(project: Project, *, secure: bool) -> Page | None:
    deploy = project.latest_deploy
    return Page(deploy, secure) if deploy is not None else None
