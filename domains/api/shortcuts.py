"""What every view of the domains API shares: its base view (the platform's, with the
domain services' refusal table) and the lookups of an object among the key's user's
projects (anything else is a 404)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from rest_framework.exceptions import NotAuthenticated, NotFound
from rest_framework.request import Request

from domains.api.errors import REFUSALS
from domains.api.serializers import DomainSerializer
from domains.dns import hostnames
from domains.models import Domain, Project, Redirect, WebhookEndpoint
from domains.selectors import is_contested
from petstore.api import ids
from petstore.api.views import BaseAPIView


# The platform's base view with the domain services' refusal codes and their statuses. (No
# docstring: drf-spectacular would make it the description of each operation without one.)
class DomainsAPIView(BaseAPIView):
    refusals = REFUSALS
    # The project a URL's slug names, among the key's user's own, looked up once here for
    # every operation under /v1/projects/{slug} before its handler runs, so no handler can
    # forget to: another user's project is the same 404 as a slug nobody has.
    project: Project

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if "slug" in kwargs:
            self.project = project_of(request, kwargs["slug"])


# --- lookups: always among the key's user's projects -------------------------------


# Longer than any stored slug or name: not looked up (nor is a NUL, which PostgreSQL refuses).
_LOOKUP_MAX = 253


def _lookable(value: str) -> bool:
    return len(value) <= _LOOKUP_MAX and "\x00" not in value


def user(request: Request) -> User:
    """The key's user (every operation needs a key: IsAuthenticated)."""
    if not isinstance(request.user, User):
        raise NotAuthenticated()
    return request.user


def project_of(request: Request, slug: str) -> Project:
    mine = Project.objects.for_owner(user(request))
    project = mine.filter(slug=slug).first() if _lookable(slug) else None
    if project is None:
        raise NotFound(f"No project {slug!r}.")
    return project


def domain_in(project: Project, hostname: str) -> Domain:
    name = hostnames.comparable(hostname)
    found = Domain.objects.filter(project=project, hostname=name).select_related("project")
    domain = found.first() if _lookable(name) else None
    if domain is None:
        raise NotFound(f"No domain {hostname!r} in project {project.slug!r}.")
    return domain


def redirect_in(project: Project, raw_id: str) -> Redirect:
    pk = ids.int64(raw_id)
    entry = Redirect.objects.filter(project=project, pk=pk).first() if pk is not None else None
    if entry is None:
        raise NotFound(f"No redirect {raw_id!r} in project {project.slug!r}.")
    return entry


def webhook_in(project: Project, raw_id: str) -> WebhookEndpoint:
    pk = ids.int64(raw_id)
    found = WebhookEndpoint.objects.filter(project=project, pk=pk) if pk is not None else None
    endpoint = found.first() if found is not None else None
    if endpoint is None:
        raise NotFound(f"No webhook {raw_id!r} in project {project.slug!r}.")
    return endpoint


# --- answers -----------------------------------------------------------------------


def domain_data(domain: Domain) -> dict[str, Any]:
    return DomainSerializer(domain, context={"contested": is_contested(domain)}).data
