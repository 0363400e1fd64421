"""OpenAPI generation shared by every /v1 resource: the bearer scheme, x-stability, the
Error body and its responses, and the document's hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers

from petstore.api import idempotency
from petstore.api.exceptions import ErrorCode, ServiceUnavailable

STABILITY_LEVELS = ("experimental", "beta")
# A view, or a method of one, that a decorator returns as it was given.
_View = TypeVar("_View", bound=Callable[..., Any])
# (path, path_regex, method, callback): the endpoints drf-spectacular hands its hooks.
Endpoint = tuple[str, str, str, Callable[..., Any]]


def stability(level: str) -> Callable[[_View], _View]:
    """Mark an operation `x-stability: experimental|beta` in the OpenAPI document.

    Usage: `@stability("experimental")` above a view method (with or under its
    own `@extend_schema`). Operations without it are stable.
    """
    if level not in STABILITY_LEVELS:
        raise ValueError(f"stability must be one of {STABILITY_LEVELS}, got {level!r}")
    return extend_schema(extensions={"x-stability": level})


class BearerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "petstore.api.authentication.BearerKeyAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "An API key from `python manage.py createapikey USERNAME`, sent as "
                "`Authorization: Bearer <key>`."
            ),
        }


class ErrorSerializer(serializers.Serializer):
    """The Error body of every error response."""

    code = serializers.ChoiceField(
        choices=ErrorCode.choices, help_text="Machine-readable error code."
    )
    message = serializers.CharField(help_text="Human-readable description.")
    status = serializers.IntegerField(help_text="The HTTP status code of the response.")
    # A field named like the Serializer.fields property: DRF's metaclass moves declared
    # fields off the class, so nothing is shadowed; the stubs cannot see that.
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="On validation_error: the invalid fields or parameters and what is wrong.",
    )


def error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=description)


UNAUTHORIZED = error(
    "unauthorized: the API key is missing, malformed, unknown or revoked "
    "(with a `WWW-Authenticate: Bearer` header)."
)
RATE_LIMITED = error(
    "rate_limited: too many requests for this API key or from this address (see "
    "`Retry-After` and `RateLimit`), or too many refused API keys from this address "
    "(see `Retry-After`)."
)
# Response headers every operation may send with its errors.
ERROR_HEADERS = [
    OpenApiParameter(
        "WWW-Authenticate",
        OpenApiTypes.STR,
        OpenApiParameter.HEADER,
        response=[401],
        required=True,
        description='`Bearer realm="petstore"`, plus `error="invalid_token"` for a refused key.',
    ),
    OpenApiParameter(
        "Retry-After",
        OpenApiTypes.INT,
        OpenApiParameter.HEADER,
        response=[429],
        required=True,
        description=(
            "Seconds until this API key (or address) may send requests again: the end of "
            "the window that refused the request."
        ),
    ),
]
NOT_ACCEPTABLE = error("not_acceptable: the `Accept` header excludes application/json.")
# What an operation that reads a request body may answer besides its own.
BODY_ERRORS = {
    413: error("payload_too_large: the body exceeds the size limit."),
    415: error("unsupported_media_type: the body is not application/json."),
}
# The header of a 201 (BaseAPIView.created).
LOCATION = OpenApiParameter(
    "Location",
    OpenApiTypes.URI,
    OpenApiParameter.HEADER,
    response=[201],
    required=True,
    description="URL of what was created.",
)


def creating(*path: OpenApiParameter) -> list[OpenApiParameter]:
    """The parameters of an operation that creates (a 201 through BaseAPIView.created):
    the path's, then `Location`, the Idempotency-Key pair and the Error headers."""
    return [*path, LOCATION, *idempotency.parameters(statuses=[201]), *ERROR_HEADERS]


def path_id(name: str, what: str) -> OpenApiParameter:
    """A row id in the path (petstore.api.ids: anything but a decimal int64 is a 404)."""
    return OpenApiParameter(name, OpenApiTypes.INT64, OpenApiParameter.PATH, description=what)


def only_v1_endpoints(endpoints: list[Endpoint], **kwargs: Any) -> list[Endpoint]:
    """Preprocessing hook: the document describes the /v1 operations only."""
    return [
        (path, path_regex, method, callback)
        for path, path_regex, method, callback in endpoints
        if path.startswith("/v1/")
    ]


# Host names of this machine: a server there is a developer's own (`make run`), not production.
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def server_description(url: str) -> str:
    """What API_BASE_URL is, as the docs page's server list names it."""
    host = urlsplit(url).hostname or ""
    if host in LOOPBACK_HOSTS or host.endswith(".localhost"):
        return "Local development"
    return "Production"


# The rate-limit fields of every answer (petstore/api/ratelimitheaders.py), in the
# structured-field form of draft-ietf-httpapi-ratelimit-headers-10.
RATE_LIMIT_HEADERS = {
    "RateLimit-Policy": {
        "schema": {"type": "string"},
        "example": '"key";q=600;w=60, "address";q=3000;w=60',
        "description": (
            "The rate limits in force (draft-ietf-httpapi-ratelimit-headers-10): `key`, "
            "requests per API key, and `address`, requests per client address; `q` requests "
            "per `w` seconds. A disabled limit is absent; with both off, so is the field."
        ),
    },
    "RateLimit": {
        "schema": {"type": "string"},
        "example": '"key";r=597;t=42, "address";r=2990;t=42',
        "description": (
            "Where this client stands in each limit (draft-ietf-httpapi-ratelimit-headers-10): "
            "`r` requests left in the current window, `t` seconds until it closes. A request "
            "that was not counted (a 401) reports the address's window only."
        ),
    },
}


def rate_limit_headers(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: RateLimit-Policy and RateLimit on every response of every
    operation, as the middleware sends them on every /v1 answer."""
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            for response in operation.get("responses", {}).values():
                headers = response.setdefault("headers", {})
                for name, header in RATE_LIMIT_HEADERS.items():
                    headers.setdefault(name, dict(header))
    return result


def service_unavailable(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: the 503 any operation answers while the database cannot
    (petstore.api.exceptions.ServiceUnavailable), with its Retry-After."""
    wait = ServiceUnavailable.wait
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            operation["responses"].setdefault(
                "503",
                {
                    "description": (
                        "service_unavailable: the database is restarting, failing over or "
                        "did not answer in time; nothing was written. Retry after "
                        "`Retry-After` seconds (a create with the same `Idempotency-Key`)."
                    ),
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                    "headers": {
                        "Retry-After": {
                            "schema": {"type": "integer"},
                            "example": wait,
                            "required": True,
                            "description": "Seconds to wait before trying again.",
                        }
                    },
                },
            )
    return result


def servers_from_settings(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: API_BASE_URL (production, or `make run`'s localhost) and
    staging, read from settings at each request."""
    result["servers"] = [
        {"url": settings.API_BASE_URL, "description": server_description(settings.API_BASE_URL)},
        {"url": settings.API_STAGING_BASE_URL, "description": "Staging"},
    ]
    return result
