"""The base view of every /v1 operation: what an app's API view inherits rather than writes.

An app's views derive from `BaseAPIView` (tests/repository/test_architecture.py checks it), which
states what the platform gives each of them: the bearer key and IsAuthenticated, the two
rate limits, the Error body for every exception (petstore.api.errors), and the steps every
operation takes the same way: the JSON object of a request body, a service called with the
app's refusal table, the `Location` of what was created (by `reverse()`, from the route's
name), and a page of a list (petstore.api.pagination). A generic list view adds DRF's
GenericAPIView before it (`class PetsView(ListModelMixin, GenericAPIView, BaseAPIView)`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from django.db.models import QuerySet
from django.http import QueryDict
from django.urls import reverse
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from petstore.api import errors, refusals
from petstore.api.authentication import BearerKeyAuthentication
from petstore.api.exceptions import BadRequest
from petstore.api.idempotency import Answer
from petstore.api.pagination import KeysetPagination
from petstore.api.permissions import KeyScopes
from petstore.api.throttles import AddressThrottle, KeyThrottle

_T = TypeVar("_T")


# No docstring, here or on an app's base view: drf-spectacular would make it the description
# of every operation that has none of its own.
class BaseAPIView(APIView):
    authentication_classes = [BearerKeyAuthentication]
    permission_classes = [IsAuthenticated, KeyScopes]
    throttle_classes = [KeyThrottle, AddressThrottle]
    # The app's refusal codes and their statuses (petstore.api.refusals).
    refusals: ClassVar[refusals.Refusals] = refusals.NONE
    # The scope a key needs for each method (petstore/apikeys/scopes.py); a method with none
    # is refused to every key (KeyScopes), so an operation cannot forget to name one.
    scopes: ClassVar[dict[str, str]] = {}

    def required_scope(self, request: Request) -> str | None:
        return self.scopes.get(request.method or "")

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response | None]:
        return errors.exception_handler

    @staticmethod
    def json_object(request: Request, *, required: bool = True) -> dict[str, Any]:
        """The request body, which must be a JSON object (a 400 `bad_request` otherwise);
        `{}` for an absent body when it is optional."""
        if request.META.get("CONTENT_LENGTH", "") in ("", "0"):
            if required:
                raise BadRequest("A JSON object request body is required.")
            return {}
        data = request.data  # may raise ParseError (400), UnsupportedMediaType (415), 413
        if isinstance(data, QueryDict) or not isinstance(data, dict):
            raise BadRequest("The request body must be a JSON object.")
        return data

    @staticmethod
    def valid(serializer_class: type[serializers.Serializer], body: dict[str, Any]) -> Any:
        """The body's validated data (a 400 `validation_error` naming the fields otherwise)."""
        serializer = serializer_class(data=body)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def service(self, call: Callable[[], _T]) -> _T:
        """`call()`, a service: its refusal answers the Error body with the code's status."""
        return self.refusals.run(call)

    def created(self, body: object, viewname: str, **kwargs: Any) -> Answer:
        """A 201 with `body` and the absolute `Location` of the route `viewname`."""
        location = self.request.build_absolute_uri(reverse(viewname, kwargs=kwargs))
        return Answer(status.HTTP_201_CREATED, body, {"Location": location})

    def page(
        self,
        request: Request,
        queryset: QuerySet[Any],
        output: type[serializers.Serializer],
        *,
        newest_first: bool = False,
    ) -> Response:
        """A page of `queryset` (in id order, or newest first: `-id`), each row shaped by
        `output`, with its `Link: rel="next"` (petstore.api.pagination)."""
        paginator = KeysetPagination(newest_first=newest_first)
        rows = paginator.paginate_queryset(queryset, request, self)
        return paginator.get_paginated_response(output(rows, many=True).data)
