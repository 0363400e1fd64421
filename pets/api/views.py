"""The v1 operations: listPets, createPet, getPet (deprecated), listCategories.

Views are thin: they validate input with a serializer, call a service, and shape
the output with another serializer. Authentication, permission, throttling and
the Error body come from REST_FRAMEWORK (settings.py) and petstore.api.errors.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django.conf import settings
from django.http import QueryDict
from django.utils import timezone
from django.utils.http import http_date
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.mixins import ListModelMixin
from rest_framework.response import Response
from rest_framework.views import APIView

from pets.api import hotpath
from pets.api.filters import PetFilter
from pets.api.serializers import INT64_MAX, CategorySerializer, NewPetSerializer, PetSerializer
from pets.models import Category, Pet
from pets.services import pet_create
from petstore.api import idempotency, openapi
from petstore.api.exceptions import BadRequest, Gone
from petstore.api.pagination import LINK_HEADER, KeysetPagination

_DIGITS = re.compile(r"[0-9]{1,19}")

# getPet: deprecated since this service's first release, removed 5 December 2030.
GET_PET_DEPRECATED_AT = datetime(2026, 11, 1, tzinfo=UTC)
GET_PET_SUNSET_AT = datetime(2030, 12, 5, tzinfo=UTC)


def _json_object(request) -> dict:
    if request.META.get("CONTENT_LENGTH", "") in ("", "0"):
        raise BadRequest("A JSON object request body is required.")
    data = request.data  # may raise ParseError (400), UnsupportedMediaType (415), 413
    if isinstance(data, QueryDict) or not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object.")
    return data


class PetsView(ListModelMixin, GenericAPIView):
    # listPets is DRF's generic list: the FilterSet validates (and documents) the
    # filter, the keyset paginator `limit` and `cursor`. With API_LIST_FAST_PATH on,
    # pets.api.hotpath answers the GETs it can with the same bytes, faster; and the lean
    # WSGI handler (petstore/http/lean.py, registered in pets/apps.py) brings them here
    # without the middleware no API response needs.
    queryset = Pet.objects.order_by("id")
    serializer_class = PetSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = PetFilter
    pagination_class = KeysetPagination

    def dispatch(self, request, *args, **kwargs):
        if request.method == "GET" and settings.API_LIST_FAST_PATH:
            response = hotpath.serve(self, request)
            if response is not None:
                return response
        return super().dispatch(request, *args, **kwargs)

    @extend_schema(
        operation_id="listPets",
        summary="List pets",
        description=(
            "Pets in ascending id order. The body is a bare array; the next page is "
            'the URL in the `Link: <...>; rel="next"` header (absent on the last page).'
        ),
        parameters=[LINK_HEADER, *openapi.ERROR_HEADERS],
        responses={
            # A bare serializer (not OpenApiResponse) so drf-spectacular sees a list
            # and documents the filter and paging parameters.
            200: PetSerializer(many=True),
            400: openapi.error(
                "validation_error: `limit` is not an integer from 1 to 100, `status` is "
                "empty or unknown, or `cursor` is invalid (see `fields`)."
            ),
            401: openapi.UNAUTHORIZED,
            406: openapi.NOT_ACCEPTABLE,
            429: openapi.RATE_LIMITED,
        },
    )
    def get(self, request):
        return self.list(request)

    @extend_schema(
        operation_id="createPet",
        summary="Add a pet",
        request=NewPetSerializer,
        parameters=[
            OpenApiParameter(
                idempotency.HEADER,
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description=(
                    "Makes a retry safe: the same key and body within 24 hours returns the "
                    "first response and creates nothing. Keys are scoped to the API key."
                ),
            ),
            OpenApiParameter(
                "Location",
                OpenApiTypes.URI,
                OpenApiParameter.HEADER,
                response=[201],
                required=True,
                description="URL of the new pet.",
            ),
            OpenApiParameter(
                "Idempotent-Replayed",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                response=[201],
                description="`true` when this is the stored response of an earlier request.",
            ),
            *openapi.ERROR_HEADERS,
        ],
        responses={
            201: OpenApiResponse(PetSerializer, description="The created pet."),
            400: openapi.error(
                "validation_error: a field is missing or invalid (see `fields`); "
                "bad_request: the body is not a JSON object, or a bad Idempotency-Key."
            ),
            401: openapi.UNAUTHORIZED,
            406: openapi.NOT_ACCEPTABLE,
            409: openapi.error("idempotency_key_in_use: the first request is still running."),
            413: openapi.error("payload_too_large: the body exceeds the size limit."),
            415: openapi.error("unsupported_media_type: the body is not application/json."),
            422: openapi.error("idempotency_key_reused: same key, different request."),
            429: openapi.RATE_LIMITED,
        },
    )
    def post(self, request):
        body = _json_object(request)
        return idempotency.run(request, body, lambda: self._create(request, body))

    def _create(self, request, body: dict) -> idempotency.Answer:
        """In idempotency.run's transaction, with the key's record when there is one."""
        serializer = NewPetSerializer(data=body)
        serializer.is_valid(raise_exception=True)
        pet = pet_create(**serializer.validated_data)
        location = request.build_absolute_uri(f"/v1/pets/{pet.pk}")
        return idempotency.Answer(
            status.HTTP_201_CREATED, PetSerializer(pet).data, {"Location": location}
        )


class PetDetailView(APIView):
    DEPRECATION_HEADERS = {
        # RFC 9745: a structured-field date; RFC 8594: an HTTP-date.
        "Deprecation": f"@{int(GET_PET_DEPRECATED_AT.timestamp())}",
        "Sunset": http_date(GET_PET_SUNSET_AT.timestamp()),
    }
    DEPRECATION_LINKS = (
        '</v1/pets>; rel="successor-version", '
        '</v1/docs/#/pets/getPet>; rel="deprecation"; type="text/html", '
        '</v1/docs/#/pets/getPet>; rel="sunset"; type="text/html"'
    )

    @extend_schema(
        operation_id="getPet",
        summary="Get a pet (deprecated)",
        description=(
            "Deprecated: use `GET /pets` (with a `status` filter) instead. Every response "
            "carries `Deprecation`, `Sunset` and `Link` headers; from the sunset date "
            "(2030-12-05) the operation answers 410 Gone."
        ),
        deprecated=True,
        parameters=[
            OpenApiParameter(
                "petId", OpenApiTypes.INT64, OpenApiParameter.PATH, description="The pet's id."
            ),
            OpenApiParameter(
                "Deprecation",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                response=True,
                required=True,
                description="RFC 9745 deprecation date, `@<unix seconds>`.",
            ),
            OpenApiParameter(
                "Sunset",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                response=True,
                required=True,
                description="RFC 8594 removal date: Thu, 05 Dec 2030 00:00:00 GMT.",
            ),
            OpenApiParameter(
                "Link",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                response=True,
                required=True,
                description='`</v1/pets>; rel="successor-version"` and links to the docs.',
            ),
            *openapi.ERROR_HEADERS,
        ],
        responses={
            200: OpenApiResponse(PetSerializer, description="The pet."),
            401: openapi.UNAUTHORIZED,
            404: openapi.error("not_found: no pet with this id."),
            406: openapi.NOT_ACCEPTABLE,
            410: openapi.error("gone: the operation was removed on its sunset date."),
            429: openapi.RATE_LIMITED,
        },
    )
    def get(self, request, petId: str):
        if timezone.now() >= GET_PET_SUNSET_AT:
            raise Gone("getPet was removed on 2030-12-05; use GET /v1/pets instead.")
        is_int64 = _DIGITS.fullmatch(petId) is not None and int(petId) <= INT64_MAX
        pet = Pet.objects.filter(pk=int(petId)).first() if is_int64 else None
        if pet is None:
            raise NotFound(f"No pet with id {petId}.")
        return Response(PetSerializer(pet).data)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        for name, value in self.DEPRECATION_HEADERS.items():
            response[name] = value
        response["Link"] = self.DEPRECATION_LINKS
        return response


class CategoriesView(APIView):
    @openapi.stability("experimental")
    @extend_schema(
        operation_id="listCategories",
        summary="List categories (experimental)",
        description="Every category, in id order: the valid `categoryId` values.",
        parameters=openapi.ERROR_HEADERS,
        responses={
            200: OpenApiResponse(CategorySerializer(many=True), description="All categories."),
            401: openapi.UNAUTHORIZED,
            406: openapi.NOT_ACCEPTABLE,
            429: openapi.RATE_LIMITED,
        },
    )
    def get(self, request):
        return Response(CategorySerializer(Category.objects.order_by("id"), many=True).data)
