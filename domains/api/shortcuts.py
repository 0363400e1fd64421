"""What every view of the domains API does the same way: find the object among the key's
user's projects (anything else is a 404), read the JSON body, call a service (its refusal
becomes the Error body), page a list."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import QueryDict
from rest_framework.exceptions import NotAuthenticated, NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from domains.api.errors import refused
from domains.api.serializers import DomainSerializer
from domains.dns import hostnames
from domains.models import Domain, Project, Redirect, WebhookEndpoint
from domains.selectors import is_contested
from petstore.api.exceptions import BadRequest
from petstore.api.pagination import KeysetPagination

# --- lookups: always among the key's user's projects -------------------------------


_INT64_MAX = 2**63 - 1
_ID = re.compile(r"[0-9]{1,19}")
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
    is_id = _ID.fullmatch(raw_id) is not None and int(raw_id) <= _INT64_MAX
    entry = Redirect.objects.filter(project=project, pk=int(raw_id)).first() if is_id else None
    if entry is None:
        raise NotFound(f"No redirect {raw_id!r} in project {project.slug!r}.")
    return entry


def webhook_in(project: Project, raw_id: str) -> WebhookEndpoint:
    is_id = _ID.fullmatch(raw_id) is not None and int(raw_id) <= _INT64_MAX
    found = WebhookEndpoint.objects.filter(project=project, pk=int(raw_id)) if is_id else None
    endpoint = found.first() if found is not None else None
    if endpoint is None:
        raise NotFound(f"No webhook {raw_id!r} in project {project.slug!r}.")
    return endpoint


# --- bodies, answers ---------------------------------------------------------------


def json_object(request: Request, *, required: bool = True) -> dict[str, Any]:
    if request.META.get("CONTENT_LENGTH", "") in ("", "0"):
        if required:
            raise BadRequest("A JSON object request body is required.")
        return {}
    data = request.data  # may raise ParseError (400), UnsupportedMediaType (415), 413
    if isinstance(data, QueryDict) or not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object.")
    return data


def valid(serializer_class: type, body: dict[str, Any]) -> dict[str, Any]:
    serializer = serializer_class(data=body)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def domain_data(domain: Domain) -> dict[str, Any]:
    return DomainSerializer(domain, context={"contested": is_contested(domain)}).data


def service(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except ValidationError as error:
        raise refused(error) from None


def page(view: APIView, request: Request, queryset: QuerySet, output: type) -> Response:
    paginator = KeysetPagination()
    page = paginator.paginate_queryset(queryset, request, view)
    return paginator.get_paginated_response(output(page, many=True).data)
