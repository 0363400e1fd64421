"""The domains API in the OpenAPI document: its tag, its Error schema and its responses.

The Error body is the platform's (petstore/api/openapi.py); a refusal of a domain
service carries that service's code (errors.REFUSALS), so the statuses a refusal
may answer document `DomainsError`, the same body whose `code` lists the platform's
codes and the refusal codes.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from domains.api.errors import REFUSALS
from petstore.api import openapi
from petstore.api.exceptions import ErrorCode
from petstore.api.pagination import LINK_HEADER, PARAMETERS

TAG = "Domains"
# The webhook endpoints' operations: their own tag.
WEBHOOKS_TAG = "Webhooks"


class DomainsErrorSerializer(openapi.ErrorSerializer):
    """The Error body, whose `code` may also be a domain service's refusal code."""

    code = serializers.ChoiceField(
        choices=[*ErrorCode.values, *REFUSALS.codes],
        help_text=(
            "Machine-readable error code: the platform's, or the refusal code of the rule "
            "that said no (the same code the dashboard and the commands get)."
        ),
    )


def refusal(description: str) -> OpenApiResponse:
    return OpenApiResponse(DomainsErrorSerializer, description=description)


NOT_FOUND = openapi.error(
    "not_found: no such project, domain or redirect among this API key's user's projects "
    "(another user's are not found either)."
)
# What every operation of this API may answer besides its own.
COMMON = {
    401: openapi.UNAUTHORIZED,
    404: NOT_FOUND,
    406: openapi.NOT_ACCEPTABLE,
    429: openapi.RATE_LIMITED,
}

SLUG = OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="Project.")
HOSTNAME = OpenApiParameter(
    "hostname",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="The domain's name as stored (ASCII, `xn--` for Unicode names), any case.",
)
REDIRECT_ID = openapi.path_id("id", "The redirect's id.")


def listed(description: str, item: type) -> dict[str, Any]:
    """`extend_schema` arguments for a project's paged list of `item`."""
    return {
        "parameters": [SLUG, *PARAMETERS, LINK_HEADER, *openapi.ERROR_HEADERS],
        "description": (
            f"{description} The body is a bare array; the next page is the URL in the "
            '`Link: <...>; rel="next"` header (absent on the last page).'
        ),
        "responses": {
            200: OpenApiResponse(item(many=True), description="A page of the list."),
            400: openapi.error(
                "validation_error: `limit` is not an integer from 1 to 100, or `cursor` is "
                "invalid (see `fields`)."
            ),
            **COMMON,
        },
    }
