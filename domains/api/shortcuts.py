"""What every view of the domains API shares: its base view (the platform's, with the
domain services' refusal table) and the lookups of an object among the key's user's
projects (anything else is a 404) and the role it needs there (a 403)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef, QuerySet
from rest_framework.exceptions import NotAuthenticated, NotFound
from rest_framework.request import Request

from domains import access
from domains.api.errors import REFUSALS
from domains.api.serializers import DomainSerializer
from domains.dns import hostnames
from domains.models import Domain, Project, ProjectKey, Redirect, WebhookEndpoint
from domains.selectors import is_contested
from petstore.api import ids
from petstore.api.exceptions import Forbidden
from petstore.api.views import BaseAPIView
from petstore.apikeys.models import ApiKey


# The platform's base view with the domain services' refusal codes and their statuses. (No
# docstring: drf-spectacular would make it the description of each operation without one.)
class DomainsAPIView(BaseAPIView):
    refusals = REFUSALS
    # The permission each method needs (domains/access.py): the key must hold its scope, and
    # the key's user a role on the project that allows it.
    permissions: ClassVar[dict[str, str]] = {}
    # The project a URL's slug names, among those the key reaches, looked up once here for
    # every operation under /v1/projects/{slug} before its handler runs, so no handler can
    # forget to: a project the caller is no member of is the same 404 as a slug nobody has;
    # one they may see but their role may not change is a 403.
    project: Project

    def required_scope(self, request: Request) -> str | None:
        permission = self.permissions.get(request.method or "")
        return None if permission is None else access.scope_for(permission)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if "slug" in kwargs:
            self.project = project_of(request, kwargs["slug"])
            permission = self.permissions.get(request.method or "")
            if permission is not None and not access.allows(self.project.role, permission):
                raise Forbidden()


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


def projects_of(request: Request) -> QuerySet[Project]:
    """The projects the request's key reaches, each with the key's user's `role`: those of
    which the user is a member, and of those only its own project for a key limited to one."""
    mine = Project.objects.for_member(user(request))
    key = request.auth if isinstance(request.auth, ApiKey) else None
    bound = ProjectKey.objects.filter(api_key=key)
    return mine.filter(~Exists(bound) | Exists(bound.filter(project=OuterRef("pk"))))


def project_of(request: Request, slug: str) -> Project:
    project = projects_of(request).filter(slug=slug).first() if _lookable(slug) else None
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
