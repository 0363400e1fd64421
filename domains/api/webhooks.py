"""The domains API's webhook endpoints: a project's endpoints and each one's delivery log,
under the Webhooks tag. The same services as the dashboard (domains/services/webhooks.py),
so the address guard's refusals are the same sentences and codes; the signing secret is
in the POST's answer only."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from domains.access import Permission
from domains.api import openapi
from domains.api.serializers import (
    NewWebhookAnswerSerializer,
    NewWebhookSerializer,
    WebhookDeliverySerializer,
    WebhookSerializer,
)
from domains.api.shortcuts import DomainsAPIView, webhook_in
from domains.models import WebhookEndpoint
from domains.selectors import webhook_deliveries, webhook_endpoints
from domains.services import webhooks
from petstore.api import idempotency
from petstore.api import openapi as platform_openapi

WEBHOOK_ID = platform_openapi.path_id("id", "The webhook endpoint's id.")


def _created(endpoint: WebhookEndpoint, secret: str) -> dict[str, Any]:
    data = dict(NewWebhookAnswerSerializer(endpoint).data)
    data["secret"] = secret
    return data


class WebhooksView(DomainsAPIView):
    permissions = {"GET": Permission.WEBHOOKS_READ, "POST": Permission.WEBHOOKS_WRITE}

    @extend_schema(
        operation_id="listWebhooks",
        summary="List a project's webhook endpoints",
        tags=[openapi.WEBHOOKS_TAG],
        **openapi.listed("The project's webhook endpoints, oldest first.", WebhookSerializer),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = self.project
        return self.page(request, webhook_endpoints(project).order_by("id"), WebhookSerializer)

    @extend_schema(
        operation_id="createWebhook",
        summary="Add a webhook endpoint",
        tags=[openapi.WEBHOOKS_TAG],
        description=(
            "Events of the chosen types are POSTed to `url`, signed per Standard Webhooks "
            "(`webhook-id`, `webhook-timestamp`, `webhook-signature`). The signing secret is "
            "in this answer only. The URL must be `https` to a public address, on port 443 "
            "or 8443; its name is resolved with a 1 s deadline. URLs refused for their "
            "address or DNS count against a limit per project per hour: past it, a 429 "
            "with the code `webhook_create_limit`, before any DNS is asked."
        ),
        request=NewWebhookSerializer,
        parameters=platform_openapi.creating(openapi.SLUG),
        responses={
            201: OpenApiResponse(NewWebhookAnswerSerializer, description="The endpoint."),
            400: openapi.refusal(
                "validation_error: the body is not `{url, events}`; webhook_url (not a "
                "URL, or spaces or control characters in it), webhook_scheme (not https), "
                "webhook_port (not 443 or 8443), webhook_unresolvable (no address, or its "
                "name servers did not answer in time), webhook_address (a loopback, "
                "private, link-local or otherwise non-public address, or an IPv6 address "
                "wrapping one), webhook_platform (this platform's own hosts); bad_request."
            ),
            **openapi.COMMON,
            409: openapi.refusal(
                "duplicate: the project has an endpoint at this URL already; webhook_limit: "
                "the project has its maximum of endpoints."
            ),
            **platform_openapi.BODY_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        project = self.project
        body = self.json_object(request)
        data = self.valid(NewWebhookSerializer, body)
        # The URL's DNS before idempotency's transaction: no row or snapshot waits on it.
        target = self.service(lambda: webhooks.endpoint_check(project=project, url=data["url"]))

        def create() -> idempotency.Answer:
            made = self.service(
                lambda: webhooks.endpoint_create(project=project, url=target, events=data["events"])
            )
            body = _created(made.endpoint, made.secret)
            return self.created(body, "api-webhook", slug=project.slug, id=made.endpoint.pk)

        return idempotency.run(request, body, create)


class WebhookDetailView(DomainsAPIView):
    permissions = {"GET": Permission.WEBHOOKS_READ, "DELETE": Permission.WEBHOOKS_WRITE}

    @extend_schema(
        operation_id="getWebhook",
        summary="Get a webhook endpoint",
        tags=[openapi.WEBHOOKS_TAG],
        parameters=[openapi.SLUG, WEBHOOK_ID, *platform_openapi.ERROR_HEADERS],
        responses={200: WebhookSerializer, **openapi.COMMON},
    )
    def get(self, request: Request, slug: str, id: str) -> Response:
        endpoint = webhook_in(self.project, id)
        return Response(WebhookSerializer(endpoint).data)

    @extend_schema(
        operation_id="deleteWebhook",
        summary="Delete a webhook endpoint and its delivery log",
        tags=[openapi.WEBHOOKS_TAG],
        parameters=[openapi.SLUG, WEBHOOK_ID, *platform_openapi.ERROR_HEADERS],
        responses={204: OpenApiResponse(description="Deleted."), **openapi.COMMON},
    )
    def delete(self, request: Request, slug: str, id: str) -> Response:
        endpoint = webhook_in(self.project, id)
        webhooks.endpoint_delete(endpoint=endpoint)
        return Response(status=status.HTTP_204_NO_CONTENT)


_DELIVERIES = openapi.listed(
    "The endpoint's delivery log, oldest first: each event sent to it, its attempts and "
    "the last answer's status, duration and first bytes.",
    WebhookDeliverySerializer,
)
_DELIVERIES["parameters"] = [WEBHOOK_ID, *_DELIVERIES["parameters"]]


class WebhookDeliveriesView(DomainsAPIView):
    permissions = {"GET": Permission.DELIVERIES_READ}

    @extend_schema(
        operation_id="listWebhookDeliveries",
        summary="List a webhook endpoint's deliveries",
        tags=[openapi.WEBHOOKS_TAG],
        **_DELIVERIES,
    )
    def get(self, request: Request, slug: str, id: str) -> Response:
        endpoint = webhook_in(self.project, id)
        entries = webhook_deliveries(endpoint).order_by("id")
        return self.page(request, entries, WebhookDeliverySerializer)
