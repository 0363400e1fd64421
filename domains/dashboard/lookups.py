"""How a dashboard view finds what its URL names: among the signed-in user's projects, with
the permission the view needs (domains/access.py).

A project the user is no member of is a 404, the same as a slug nobody has; a project they
are a member of whose role does not allow the view is a 403: they may see it, not do this.
Views say their permission once, in `project_view` or `domain_view`, which look the object
up before the view runs, pass it in, and keep the permission on the view
(`view.permission`), where tests/security/test_access_matrix.py reads it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from domains import access
from domains.dns import hostnames
from domains.models import Domain, Project, WebhookEndpoint

View = Callable[..., HttpResponse]


def signed_in(request: HttpRequest) -> User:
    """The signed-in user (the views are login_required: anyone else is refused here too)."""
    if not isinstance(request.user, User):
        raise PermissionDenied
    return request.user


def member_project(request: HttpRequest, slug: str, permission: str) -> Project:
    """The member's project with their `role` on it, if the role allows `permission`."""
    project = get_object_or_404(Project.objects.for_member(signed_in(request)), slug=slug)
    if not access.allows(project.role, permission):
        raise PermissionDenied
    return project


def member_domain(request: HttpRequest, slug: str, hostname: str, permission: str) -> Domain:
    project = member_project(request, slug, permission)
    domain = get_object_or_404(
        Domain.objects.filter(project=project), hostname=hostnames.comparable(hostname)
    )
    domain.project = project  # with the member's role, for the page's buttons
    return domain


def member_endpoint(request: HttpRequest, pk: int, permission: str) -> WebhookEndpoint:
    """A webhook endpoint of one of the member's projects, if their role there allows it."""
    endpoint = get_object_or_404(WebhookEndpoint.objects.all(), pk=pk)
    mine = Project.objects.for_member(signed_in(request))
    project = mine.filter(pk=endpoint.project_id).first()
    if project is None:
        raise Http404
    if not access.allows(project.role, permission):
        raise PermissionDenied
    endpoint.project = project
    return endpoint


def _member_view(
    find: Callable[..., Any], names: tuple[str, ...], permission: str
) -> Callable[[View], View]:
    """A view called with what `find` looks up from the URL's arguments `names` (a 404 or 403
    before the view runs), its permission kept on it."""

    def decorate(view: View) -> View:
        @login_required
        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            found = find(request, *[kwargs.pop(name) for name in names], permission)
            return view(request, found, *args, **kwargs)

        wrapped.permission = permission  # type: ignore[attr-defined]
        return wrapped

    return decorate


def project_view(permission: str) -> Callable[[View], View]:
    """A signed-in member's view of the URL's project (`slug`), called with the project."""
    return _member_view(member_project, ("slug",), permission)


def domain_view(permission: str) -> Callable[[View], View]:
    """A signed-in member's view of the URL's domain (`slug`, `hostname`), called with it."""
    return _member_view(member_domain, ("slug", "hostname"), permission)


def endpoint_view(permission: str) -> Callable[[View], View]:
    """A signed-in member's view of the URL's webhook endpoint (`pk`), called with it."""
    return _member_view(member_endpoint, ("pk",), permission)
