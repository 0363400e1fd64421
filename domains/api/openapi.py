"""The domains API in the OpenAPI document: its tag, its Error schema and its responses.

The Error body is the platform's (petstore/api/openapi.py); a refusal of a domain
service carries that service's code (errors.REFUSAL_STATUS), so the statuses a refusal
may answer document `DomainsError`, the same body whose `code` lists the platform's
codes and the refusal codes.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from domains.api.errors import REFUSAL_CODES
from petstore.api import openapi
from petstore.api.exceptions import ErrorCode
from petstore.api.pagination import LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, LINK_HEADER

TAG = "Domains"
# Where the webhook endpoints' operations go when they are built: their own tag.
WEBHOOKS_TAG = "Webhooks"


class DomainsErrorSerializer(openapi.ErrorSerializer):
    """The Error body, whose `code` may also be a domain service's refusal code."""

    code = serializers.ChoiceField(
        choices=[*ErrorCode.values, *REFUSAL_CODES],
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
BODY_ERRORS = {
    413: openapi.error("payload_too_large: the body exceeds the size limit."),
    415: openapi.error("unsupported_media_type: the body is not application/json."),
}

SLUG = OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="Project.")
HOSTNAME = OpenApiParameter(
    "hostname",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="The domain's name as stored (ASCII, `xn--` for Unicode names), any case.",
)
REDIRECT_ID = OpenApiParameter(
    "id", OpenApiTypes.INT64, OpenApiParameter.PATH, description="The redirect's id."
)
LOCATION = OpenApiParameter(
    "Location",
    OpenApiTypes.URI,
    OpenApiParameter.HEADER,
    response=[201],
    required=True,
    description="URL of what was created.",
)
# The lists' keyset paging (petstore.api.pagination), as listPets documents it.
PAGING = [
    OpenApiParameter(
        "limit",
        {"type": "integer", "minimum": LIMIT_MIN, "maximum": LIMIT_MAX, "default": LIMIT_DEFAULT},
        OpenApiParameter.QUERY,
        description="Maximum number of items returned.",
    ),
    OpenApiParameter(
        "cursor",
        OpenApiTypes.STR,
        OpenApiParameter.QUERY,
        description=(
            "Opaque position in the list. Do not build it: follow the "
            '`Link: <...>; rel="next"` header of the previous page.'
        ),
    ),
]


def listed(description: str, item: type) -> dict[str, Any]:
    """`extend_schema` arguments for a project's paged list of `item`."""
    return {
        "parameters": [SLUG, *PAGING, LINK_HEADER, *openapi.ERROR_HEADERS],
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
