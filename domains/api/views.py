"""The domains API's operations: one APIView per resource, thin.

Each finds the object among the key's user's projects (any other is a 404, the same
answer as for a name that does not exist), validates the body with an input
serializer, calls the service the dashboard calls, and shapes the answer with an
output serializer. A refusal is the service's sentence and code (errors.REFUSALS);
every POST honours Idempotency-Key (petstore.api.idempotency). The body check, the
refusals, `Location` and paging are the platform's base view's (DomainsAPIView).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from domains import tasks
from domains.access import Permission
from domains.api import openapi
from domains.api.serializers import (
    DomainSerializer,
    DomainSummarySerializer,
    NewDomainSerializer,
    NewRedirectSerializer,
    PrimaryDomainSerializer,
    ProjectSerializer,
    RedirectSerializer,
)
from domains.api.shortcuts import (
    DomainsAPIView,
    domain_data,
    domain_in,
    projects_of,
    redirect_in,
    user,
)
from domains.services import custom_domains, projects, redirects
from petstore.api import idempotency
from petstore.api import openapi as platform_openapi
from petstore.api.idempotency import Answer
from petstore.api.pagination import LINK_HEADER, PARAMETERS

# --- projects ----------------------------------------------------------------------


class ProjectsView(DomainsAPIView):
    permissions = {"GET": Permission.DOMAINS_READ}

    @extend_schema(
        operation_id="listProjects",
        summary="List your projects",
        tags=[openapi.TAG],
        description=(
            "The API key's user's projects in creation order. The body is a bare array; "
            'the next page is the URL in the `Link: <...>; rel="next"` header.'
        ),
        parameters=[*PARAMETERS, LINK_HEADER, *platform_openapi.ERROR_HEADERS],
        responses={
            200: OpenApiResponse(ProjectSerializer(many=True), description="A page of projects."),
            400: platform_openapi.error("validation_error: a bad `limit` or `cursor`."),
            401: platform_openapi.UNAUTHORIZED,
            406: platform_openapi.NOT_ACCEPTABLE,
            429: platform_openapi.RATE_LIMITED,
        },
    )
    def get(self, request: Request) -> Response:
        mine = projects_of(request).select_related("primary_domain")
        return self.page(request, mine.order_by("id"), ProjectSerializer)


# --- domains -----------------------------------------------------------------------


class DomainsView(DomainsAPIView):
    permissions = {"GET": Permission.DOMAINS_READ, "POST": Permission.DOMAINS_ADD}

    @extend_schema(
        operation_id="listDomains",
        summary="List a project's domains",
        tags=[openapi.TAG],
        **openapi.listed(
            "The project's domains in the order they were added.", DomainSummarySerializer
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = self.project
        return self.page(request, project.domains.order_by("id"), DomainSummarySerializer)

    @extend_schema(
        operation_id="addDomain",
        summary="Add a domain",
        tags=[openapi.TAG],
        description=(
            "Claims the name for the project, as Add domain on the dashboard does. Create "
            "the `dns_records` of the answer, then ask for a check (`verifyDomain`)."
        ),
        request=NewDomainSerializer,
        parameters=platform_openapi.creating(openapi.SLUG),
        responses={
            201: OpenApiResponse(DomainSerializer, description="The domain added."),
            400: openapi.refusal(
                "validation_error: the body is not `{hostname}`; bad_request: not a JSON "
                "object or a bad Idempotency-Key; or the name is not one a project may add "
                "(invalid_hostname, public_suffix, special_use_name, not_public_name, "
                "platform_domain, ...)."
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
            **platform_openapi.BODY_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = self.project
        body = self.json_object(request)

        def add() -> Answer:
            hostname = self.valid(NewDomainSerializer, body)["hostname"]
            domain = self.service(
                lambda: custom_domains.domain_add(
                    project=project, hostname=hostname, actor=user(request)
                )
            )
            return self.created(
                domain_data(domain), "api-domain", slug=project.slug, hostname=domain.hostname
            )

        return idempotency.run(request, body, add)


class DomainDetailView(DomainsAPIView):
    permissions = {"GET": Permission.DOMAINS_READ, "DELETE": Permission.DOMAINS_REMOVE}

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
        return Response(domain_data(domain_in(self.project, hostname)))

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
        domain = domain_in(self.project, hostname)
        self.service(lambda: custom_domains.domain_remove(domain=domain, actor=user(request)))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DomainVerifyView(DomainsAPIView):
    permissions = {"POST": Permission.DOMAINS_VERIFY}

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
            **platform_openapi.BODY_ERRORS,
        },
    )
    def post(self, request: Request, slug: str, hostname: str) -> Response:
        domain = domain_in(self.project, hostname)
        body = self.json_object(request, required=False)

        def verify() -> Answer:
            # The dashboard's Verify: the request is recorded, the check queued on commit.
            self.service(lambda: tasks.request_check(domain=domain, actor=user(request)))
            return Answer(202, domain_data(domain))

        return idempotency.run(request, body, verify)


# --- the primary domain ------------------------------------------------------------


class PrimaryDomainView(DomainsAPIView):
    permissions = {"PUT": Permission.PRIMARY_SET, "DELETE": Permission.PRIMARY_SET}

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
            **platform_openapi.BODY_ERRORS,
        },
    )
    def put(self, request: Request, slug: str) -> Response:
        project = self.project
        hostname = self.valid(PrimaryDomainSerializer, self.json_object(request))["hostname"]
        domain = domain_in(project, hostname)
        self.service(
            lambda: projects.project_set_primary(
                project=project, domain=domain, actor=user(request)
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
        project = self.project
        self.service(
            lambda: projects.project_set_primary(project=project, domain=None, actor=user(request))
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- redirects ---------------------------------------------------------------------


class RedirectsView(DomainsAPIView):
    permissions = {"GET": Permission.REDIRECTS_READ, "POST": Permission.REDIRECTS_WRITE}

    @extend_schema(
        operation_id="listRedirects",
        summary="List a project's redirects",
        tags=[openapi.TAG],
        **openapi.listed(
            "The project's redirects in the order they were made.", RedirectSerializer
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = self.project
        entries = project.redirects.select_related("from_domain", "to_domain").order_by("id")
        return self.page(request, entries, RedirectSerializer)

    @extend_schema(
        operation_id="createRedirect",
        summary="Redirect one domain to another",
        tags=[openapi.TAG],
        description="Requests to `from` are answered with a redirect to `to` (a live domain).",
        request=NewRedirectSerializer,
        parameters=platform_openapi.creating(openapi.SLUG),
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
            **platform_openapi.BODY_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = self.project
        body = self.json_object(request)

        def create() -> Answer:
            data = self.valid(NewRedirectSerializer, body)
            from_domain = domain_in(project, data["from"])
            to_domain = domain_in(project, data["to"])
            entry = self.service(
                lambda: redirects.redirect_save(
                    project=project,
                    from_domain=from_domain,
                    to_domain=to_domain,
                    status=data["status"],
                    actor=user(request),
                )
            )
            return self.created(
                RedirectSerializer(entry).data, "api-redirect", slug=project.slug, id=entry.pk
            )

        return idempotency.run(request, body, create)


class RedirectDetailView(DomainsAPIView):
    permissions = {"DELETE": Permission.REDIRECTS_WRITE}

    @extend_schema(
        operation_id="deleteRedirect",
        summary="Delete a redirect",
        tags=[openapi.TAG],
        parameters=[openapi.SLUG, openapi.REDIRECT_ID, *platform_openapi.ERROR_HEADERS],
        responses={204: OpenApiResponse(description="Deleted."), **openapi.COMMON},
    )
    def delete(self, request: Request, slug: str, id: str) -> Response:
        entry = redirect_in(self.project, id)
        self.service(lambda: redirects.redirect_delete(redirect=entry, actor=user(request)))
        return Response(status=status.HTTP_204_NO_CONTENT)
