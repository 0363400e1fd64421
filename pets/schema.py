"""OpenAPI generation: the bearer scheme, x-stability, Error responses, and hooks."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema

from pets.serializers import ErrorSerializer

STABILITY_LEVELS = ("experimental", "beta")


def stability(level: str):
    """Mark an operation `x-stability: experimental|beta` in the OpenAPI document.

    Usage: `@stability("experimental")` above a view method (with or under its
    own `@extend_schema`). Operations without it are stable.
    """
    if level not in STABILITY_LEVELS:
        raise ValueError(f"stability must be one of {STABILITY_LEVELS}, got {level!r}")
    return extend_schema(extensions={"x-stability": level})


class BearerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "pets.authentication.BearerKeyAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "An API key from `python manage.py createapikey USERNAME`, sent as "
                "`Authorization: Bearer <key>`."
            ),
        }


def error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=description)


UNAUTHORIZED = error(
    "unauthorized: the API key is missing, malformed, unknown or revoked "
    "(with a `WWW-Authenticate: Bearer` header)."
)
RATE_LIMITED = error("rate_limited: too many requests for this API key (see `Retry-After`).")
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
        description="Seconds until this API key may send requests again.",
    ),
]
NOT_ACCEPTABLE = error("not_acceptable: the `Accept` header excludes application/json.")


def only_v1_endpoints(endpoints, **kwargs):
    """Preprocessing hook: the document describes the /v1 operations only."""
    return [
        (path, path_regex, method, callback)
        for path, path_regex, method, callback in endpoints
        if path.startswith("/v1/")
    ]


def name_pets_array(result, **kwargs):
    """Postprocessing hook: the page of listPets is the spec's `Pets` (array of Pet)."""
    schemas = result.get("components", {}).get("schemas", {})
    if "PaginatedPetList" in schemas:
        schemas["Pets"] = schemas.pop("PaginatedPetList")
        schemas["Pets"]["description"] = "A JSON array of Pet."
        for item in result["paths"].values():
            for operation in item.values():
                content = operation.get("responses", {}).get("200", {}).get("content", {})
                if content and not operation["responses"]["200"].get("description"):
                    operation["responses"]["200"]["description"] = "A page of pets."
                for media in content.values():
                    if media.get("schema") == {"$ref": "#/components/schemas/PaginatedPetList"}:
                        media["schema"] = {"$ref": "#/components/schemas/Pets"}
    return result


def servers_from_settings(result, **kwargs):
    """Postprocessing hook: production and staging, read from settings at each request."""
    result["servers"] = [
        {"url": settings.API_BASE_URL, "description": "Production"},
        {"url": settings.API_STAGING_BASE_URL, "description": "Staging"},
    ]
    return result
