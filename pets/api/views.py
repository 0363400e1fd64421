"""The v1 operations: listPets, createPet, getPet (deprecated), listCategories.

Views are thin: they validate input with a serializer, call a service, and shape
the output with another serializer. Authentication, permission, throttling, the
Error body, the JSON body check and `Location` come from the platform's base view
(petstore.api.views.BaseAPIView).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.utils import timezone
from django.utils.http import http_date
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.mixins import ListModelMixin
from rest_framework.response import Response

from pets.api import createpath, hotpath
from pets.api.filters import PetFilter
from pets.api.serializers import CategorySerializer, NewPetSerializer, PetSerializer
from pets.models import Category, Pet
from pets.services import pet_create
from petstore.api import idempotency, ids, openapi
from petstore.api.exceptions import Gone
from petstore.api.pagination import LINK_HEADER, KeysetPagination
from petstore.api.views import BaseAPIView
from petstore.apikeys.scopes import Scope

# getPet: deprecated since this service's first release, removed 5 December 2030.
GET_PET_DEPRECATED_AT = datetime(2026, 11, 1, tzinfo=UTC)
GET_PET_SUNSET_AT = datetime(2030, 12, 5, tzinfo=UTC)
# PetsView's fast path of each method, under API_LIST_FAST_PATH.
_FAST_PATHS = {"GET": hotpath.serve, "POST": createpath.serve}


class PetsView(ListModelMixin, GenericAPIView, BaseAPIView):
    # listPets is DRF's generic list: the FilterSet validates (and documents) the
    # filter, the keyset paginator `limit` and `cursor`. With API_LIST_FAST_PATH on,
    # pets.api.hotpath answers the GETs it can and pets.api.createpath the POSTs, with the
    # same bytes, faster; and the lean WSGI handler (petstore/http/lean.py, registered in
    # pets/apps.py) brings both here without the middleware no API response needs.
    scopes = {"GET": Scope.PETS_READ, "POST": Scope.PETS_WRITE}
    queryset = Pet.objects.order_by("id")
    serializer_class = PetSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = PetFilter
    pagination_class = KeysetPagination

    def dispatch(self, request, *args, **kwargs):
        fast = _FAST_PATHS.get(request.method or "") if settings.API_LIST_FAST_PATH else None
        if fast is not None and (response := fast(self, request)) is not None:
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
        parameters=openapi.creating(),
        responses={
            201: OpenApiResponse(PetSerializer, description="The created pet."),
            400: openapi.error(
                "validation_error: a field is missing or invalid (see `fields`); "
                "bad_request: the body is not a JSON object, or a bad Idempotency-Key."
            ),
            401: openapi.UNAUTHORIZED,
            406: openapi.NOT_ACCEPTABLE,
            409: openapi.error("idempotency_key_in_use: the first request is still running."),
            **openapi.BODY_ERRORS,
            422: openapi.error("idempotency_key_reused: same key, different request."),
            429: openapi.RATE_LIMITED,
        },
    )
    def post(self, request):
        body = self.json_object(request)
        return idempotency.run(request, body, lambda: self._create(body))

    def _create(self, body: dict) -> idempotency.Answer:
        """In idempotency.run's transaction, with the key's record when there is one."""
        pet = pet_create(**self.valid(NewPetSerializer, body))
        return self.created(PetSerializer(pet).data, "pet-detail", petId=pet.pk)


class PetDetailView(BaseAPIView):
    scopes = {"GET": Scope.PETS_READ}
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
            openapi.path_id("petId", "The pet's id."),
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
        pk = ids.int64(petId)
        pet = Pet.objects.filter(pk=pk).first() if pk is not None else None
        if pet is None:
            raise NotFound(f"No pet with id {petId}.")
        return Response(PetSerializer(pet).data)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        for name, value in self.DEPRECATION_HEADERS.items():
            response[name] = value
        response["Link"] = self.DEPRECATION_LINKS
        return response


class CategoriesView(BaseAPIView):
    scopes = {"GET": Scope.PETS_READ}

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
