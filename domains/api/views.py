"""The domains API's operations: one APIView per resource, thin.

Each finds the object among the key's user's projects (any other is a 404, the same
answer as for a name that does not exist), validates the body with an input
serializer, calls the service the dashboard calls, and shapes the answer with an
output serializer. A refusal is the service's sentence and code (errors.refused);
every POST honours Idempotency-Key (petstore.api.idempotency).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.http import QueryDict
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotAuthenticated, NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from domains import tasks
from domains.api import openapi
from domains.api.errors import refused
from domains.api.serializers import (
    DomainSerializer,
    DomainSummarySerializer,
    NewDomainSerializer,
    NewRedirectSerializer,
    PrimaryDomainSerializer,
    ProjectSerializer,
    RedirectSerializer,
)
from domains.dns import hostnames
from domains.models import Domain, Project, Redirect
from domains.selectors import is_contested
from domains.services import custom_domains, projects, redirects
from petstore.api import idempotency
from petstore.api import openapi as platform_openapi
from petstore.api.exceptions import BadRequest
from petstore.api.idempotency import Claim
from petstore.api.pagination import LINK_HEADER, KeysetPagination

# --- lookups: always among the key's user's projects -------------------------------


_INT64_MAX = 2**63 - 1
_ID = re.compile(r"[0-9]{1,19}")
# Longer than any stored slug or name: not looked up (nor is a NUL, which PostgreSQL refuses).
_LOOKUP_MAX = 253


def _lookable(value: str) -> bool:
    return len(value) <= _LOOKUP_MAX and "\x00" not in value


def _user(request: Request) -> User:
    """The key's user (every operation needs a key: IsAuthenticated)."""
    if not isinstance(request.user, User):
        raise NotAuthenticated()
    return request.user


def _project(request: Request, slug: str) -> Project:
    mine = Project.objects.for_owner(_user(request))
    project = mine.filter(slug=slug).first() if _lookable(slug) else None
    if project is None:
        raise NotFound(f"No project {slug!r}.")
    return project


def _domain(project: Project, hostname: str) -> Domain:
    name = hostnames.comparable(hostname)
    found = Domain.objects.filter(project=project, hostname=name).select_related("project")
    domain = found.first() if _lookable(name) else None
    if domain is None:
        raise NotFound(f"No domain {hostname!r} in project {project.slug!r}.")
    return domain


def _redirect(project: Project, raw_id: str) -> Redirect:
    is_id = _ID.fullmatch(raw_id) is not None and int(raw_id) <= _INT64_MAX
    entry = Redirect.objects.filter(project=project, pk=int(raw_id)).first() if is_id else None
    if entry is None:
        raise NotFound(f"No redirect {raw_id!r} in project {project.slug!r}.")
    return entry


# --- bodies, answers ---------------------------------------------------------------


def _json_object(request: Request, *, required: bool = True) -> dict[str, Any]:
    if request.META.get("CONTENT_LENGTH", "") in ("", "0"):
        if required:
            raise BadRequest("A JSON object request body is required.")
        return {}
    data = request.data  # may raise ParseError (400), UnsupportedMediaType (415), 413
    if isinstance(data, QueryDict) or not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object.")
    return data


def _valid(serializer_class: type, body: dict[str, Any]) -> dict[str, Any]:
    serializer = serializer_class(data=body)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _domain_data(domain: Domain) -> dict[str, Any]:
    return DomainSerializer(domain, context={"contested": is_contested(domain)}).data


def _answer(
    claim: Claim | None, data: Any, http_status: int, headers: dict[str, str] | None = None
) -> Response:
    """The response, stored for replay in the caller's transaction when a key claimed it."""
    headers = headers or {}
    if claim is not None:
        idempotency.complete(claim, status=http_status, body=data, headers=headers)
    return Response(data, status=http_status, headers=headers)


def _service(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except ValidationError as error:
        raise refused(error) from None


def _page(view: APIView, request: Request, queryset: QuerySet, output: type) -> Response:
    paginator = KeysetPagination()
    page = paginator.paginate_queryset(queryset, request, view)
    return paginator.get_paginated_response(output(page, many=True).data)


def _listed(description: str, item: type) -> dict[str, Any]:
    return {
        "parameters": [openapi.SLUG, *openapi.PAGING, LINK_HEADER, *platform_openapi.ERROR_HEADERS],
        "description": (
            f"{description} The body is a bare array; the next page is the URL in the "
            '`Link: <...>; rel="next"` header (absent on the last page).'
        ),
        "responses": {
            200: OpenApiResponse(item(many=True), description="A page of the list."),
            400: platform_openapi.error(
                "validation_error: `limit` is not an integer from 1 to 100, or `cursor` is "
                "invalid (see `fields`)."
            ),
            **openapi.COMMON,
        },
    }


POST_ERRORS = {
    409: openapi.refusal(
        "idempotency_key_in_use, or a refusal that conflicts with the project's state now."
    ),
    422: openapi.refusal("idempotency_key_reused, or a refusal by a rule of the project."),
    **openapi.BODY_ERRORS,
}


# --- projects ----------------------------------------------------------------------


class ProjectsView(APIView):
    @extend_schema(
        operation_id="listProjects",
        summary="List your projects",
        tags=[openapi.TAG],
        description=(
            "The API key's user's projects in creation order. The body is a bare array; "
            'the next page is the URL in the `Link: <...>; rel="next"` header.'
        ),
        parameters=[*openapi.PAGING, LINK_HEADER, *platform_openapi.ERROR_HEADERS],
        responses={
            200: OpenApiResponse(ProjectSerializer(many=True), description="A page of projects."),
            400: platform_openapi.error("validation_error: a bad `limit` or `cursor`."),
            401: platform_openapi.UNAUTHORIZED,
            406: platform_openapi.NOT_ACCEPTABLE,
            429: platform_openapi.RATE_LIMITED,
        },
    )
    def get(self, request: Request) -> Response:
        mine = Project.objects.for_owner(_user(request)).select_related("primary_domain")
        return _page(self, request, mine.order_by("id"), ProjectSerializer)


# --- domains -----------------------------------------------------------------------


class DomainsView(APIView):
    @extend_schema(
        operation_id="listDomains",
        summary="List a project's domains",
        tags=[openapi.TAG],
        **_listed("The project's domains in the order they were added.", DomainSummarySerializer),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = _project(request, slug)
        return _page(self, request, project.domains.order_by("id"), DomainSummarySerializer)

    @extend_schema(
        operation_id="addDomain",
        summary="Add a domain",
        tags=[openapi.TAG],
        description=(
            "Claims the name for the project, as Add domain on the dashboard does. Create "
            "the `dns_records` of the answer, then ask for a check (`verifyDomain`)."
        ),
        request=NewDomainSerializer,
        parameters=[
            openapi.SLUG,
            openapi.LOCATION,
            *idempotency.parameters(statuses=[201]),
            *platform_openapi.ERROR_HEADERS,
        ],
        responses={
            201: OpenApiResponse(DomainSerializer, description="The domain added."),
            400: openapi.refusal(
                "validation_error: the body is not `{hostname}`; bad_request: not a JSON "
                "object or a bad Idempotency-Key; or the name is not one a project may add "
                "(invalid_hostname, public_suffix, platform_domain, ...)."
            ),
            **openapi.COMMON,
            409: openapi.refusal(
                "duplicate: already added; quota_reached: the plan's limit; "
                "idempotency_key_in_use: the first request is still running."
            ),
            422: openapi.refusal(
                "plan_required: custom domains need Pro or above; deploy_required: deploy "
                "first; idempotency_key_reused: same key, different request."
            ),
            **openapi.BODY_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = _project(request, slug)
        body = _json_object(request)

        def add(claim: Claim | None) -> Response:
            hostname = _valid(NewDomainSerializer, body)["hostname"]
            with transaction.atomic():
                domain = _service(
                    lambda: custom_domains.domain_add(
                        project=project, hostname=hostname, actor=_user(request)
                    )
                )
                location = request.build_absolute_uri(
                    f"/v1/projects/{project.slug}/domains/{domain.hostname}"
                )
                return _answer(claim, _domain_data(domain), 201, {"Location": location})

        return idempotency.run(request, body, add)


class DomainDetailView(APIView):
    @extend_schema(
        operation_id="getDomain",
        summary="Get a domain",
        tags=[openapi.TAG],
        description=(
            "Its state, the last and next check, the DNS records to create, the certificate "
            "served, and whether the name is contested."
        ),
        parameters=[openapi.SLUG, openapi.HOSTNAME, *platform_openapi.ERROR_HEADERS],
        responses={
            200: OpenApiResponse(DomainSerializer, description="The domain."),
            **openapi.COMMON,
        },
    )
    def get(self, request: Request, slug: str, hostname: str) -> Response:
        return Response(_domain_data(_domain(_project(request, slug), hostname)))

    @extend_schema(
        operation_id="removeDomain",
        summary="Remove a domain",
        tags=[openapi.TAG],
        description=(
            "Stops serving at once; its redirects go with it, and a primary domain is "
            "cleared (the project's own address serves again)."
        ),
        parameters=[openapi.SLUG, openapi.HOSTNAME, *platform_openapi.ERROR_HEADERS],
        responses={204: OpenApiResponse(description="Removed."), **openapi.COMMON},
    )
    def delete(self, request: Request, slug: str, hostname: str) -> Response:
        domain = _domain(_project(request, slug), hostname)
        _service(lambda: custom_domains.domain_remove(domain=domain, actor=_user(request)))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DomainVerifyView(APIView):
    @extend_schema(
        operation_id="verifyDomain",
        summary="Check a domain's DNS now",
        tags=[openapi.TAG],
        description=(
            "Verify / Re-verify: a worker checks the DNS records after this answer; "
            "`getDomain` shows the result when it comes (`check.in_progress` until then). "
            "No body is needed."
        ),
        request=None,
        parameters=[
            openapi.SLUG,
            openapi.HOSTNAME,
            *idempotency.parameters(statuses=[202]),
            *platform_openapi.ERROR_HEADERS,
        ],
        responses={
            202: OpenApiResponse(DomainSerializer, description="The check is queued."),
            400: platform_openapi.error(
                "bad_request: a body that is not a JSON object, or a bad Idempotency-Key."
            ),
            **openapi.COMMON,
            409: openapi.refusal(
                "check_in_progress: a check is under way; cooldown: checked a moment ago; "
                "idempotency_key_in_use: the first request is still running."
            ),
            422: openapi.refusal("idempotency_key_reused: same key, different request."),
            **openapi.BODY_ERRORS,
        },
    )
    def post(self, request: Request, slug: str, hostname: str) -> Response:
        domain = _domain(_project(request, slug), hostname)
        body = _json_object(request, required=False)

        def verify(claim: Claim | None) -> Response:
            with transaction.atomic():
                # The dashboard's Verify: the request is recorded, the check queued on commit.
                _service(lambda: tasks.request_check(domain=domain, actor=_user(request)))
                return _answer(claim, _domain_data(domain), 202)

        return idempotency.run(request, body, verify)


# --- the primary domain ------------------------------------------------------------


class PrimaryDomainView(APIView):
    @extend_schema(
        operation_id="setPrimaryDomain",
        summary="Set the primary domain",
        tags=[openapi.TAG],
        description="The project is served under this domain; the others may redirect to it.",
        request=PrimaryDomainSerializer,
        parameters=[openapi.SLUG, *platform_openapi.ERROR_HEADERS],
        responses={
            200: OpenApiResponse(ProjectSerializer, description="The project."),
            400: platform_openapi.error(
                "validation_error: the body is not `{hostname}`; bad_request: not a JSON object."
            ),
            **openapi.COMMON,
            409: openapi.refusal("primary_redirects: the domain redirects elsewhere."),
            **openapi.BODY_ERRORS,
        },
    )
    def put(self, request: Request, slug: str) -> Response:
        project = _project(request, slug)
        hostname = _valid(PrimaryDomainSerializer, _json_object(request))["hostname"]
        domain = _domain(project, hostname)
        _service(
            lambda: projects.project_set_primary(
                project=project, domain=domain, actor=_user(request)
            )
        )
        return Response(ProjectSerializer(project).data)

    @extend_schema(
        operation_id="clearPrimaryDomain",
        summary="Clear the primary domain",
        tags=[openapi.TAG],
        description="The project is served under its platform address again.",
        parameters=[openapi.SLUG, *platform_openapi.ERROR_HEADERS],
        responses={204: OpenApiResponse(description="Cleared."), **openapi.COMMON},
    )
    def delete(self, request: Request, slug: str) -> Response:
        project = _project(request, slug)
        _service(
            lambda: projects.project_set_primary(project=project, domain=None, actor=_user(request))
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- redirects ---------------------------------------------------------------------


class RedirectsView(APIView):
    @extend_schema(
        operation_id="listRedirects",
        summary="List a project's redirects",
        tags=[openapi.TAG],
        **_listed("The project's redirects in the order they were made.", RedirectSerializer),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = _project(request, slug)
        entries = project.redirects.select_related("from_domain", "to_domain").order_by("id")
        return _page(self, request, entries, RedirectSerializer)

    @extend_schema(
        operation_id="createRedirect",
        summary="Redirect one domain to another",
        tags=[openapi.TAG],
        description="Requests to `from` are answered with a redirect to `to` (a live domain).",
        request=NewRedirectSerializer,
        parameters=[
            openapi.SLUG,
            openapi.LOCATION,
            *idempotency.parameters(statuses=[201]),
            *platform_openapi.ERROR_HEADERS,
        ],
        responses={
            201: OpenApiResponse(RedirectSerializer, description="The redirect."),
            400: openapi.refusal(
                "validation_error: the body is not `{from, to, status}`; bad_request: not a "
                "JSON object or a bad Idempotency-Key."
            ),
            **openapi.COMMON,
            409: openapi.refusal(
                "duplicate_from: `from` already redirects; redirect_loop; primary_redirects: "
                "`from` is the primary domain; idempotency_key_in_use."
            ),
            422: openapi.refusal("target_not_live: `to` has not verified; idempotency_key_reused."),
            **openapi.BODY_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = _project(request, slug)
        body = _json_object(request)

        def create(claim: Claim | None) -> Response:
            data = _valid(NewRedirectSerializer, body)
            from_domain = _domain(project, data["from"])
            to_domain = _domain(project, data["to"])
            with transaction.atomic():
                entry = _service(
                    lambda: redirects.redirect_save(
                        project=project,
                        from_domain=from_domain,
                        to_domain=to_domain,
                        status=data["status"],
                        actor=_user(request),
                    )
                )
                location = request.build_absolute_uri(
                    f"/v1/projects/{project.slug}/redirects/{entry.pk}"
                )
                return _answer(claim, RedirectSerializer(entry).data, 201, {"Location": location})

        return idempotency.run(request, body, create)


class RedirectDetailView(APIView):
    @extend_schema(
        operation_id="deleteRedirect",
        summary="Delete a redirect",
        tags=[openapi.TAG],
        parameters=[openapi.SLUG, openapi.REDIRECT_ID, *platform_openapi.ERROR_HEADERS],
        responses={204: OpenApiResponse(description="Deleted."), **openapi.COMMON},
    )
    def delete(self, request: Request, slug: str, id: str) -> Response:
        entry = _redirect(_project(request, slug), id)
        _service(lambda: redirects.redirect_delete(redirect=entry, actor=_user(request)))
        return Response(status=status.HTTP_204_NO_CONTENT)
