"""listPets' hot path: the GETs of PetsView answered in one pass, with DRF's bytes.

PetsView is DRF's generic list view. This module answers the same request
without DRF's per-request machinery, which is most of a list request's CPU once
the query is cheap (numbers: docs/decisions/performance.md):

- no `Request` wrapper: every read of it goes through `Request.__getattr__`, and
  each request builds its parsers, authenticators, negotiator and permissions.
  The view's authenticator and throttles run on Django's request itself, which
  holds all they read (`META`, `user`, `auth`);
- no content negotiation for the `Accept` values that need none (absent, `*/*`,
  the renderer's media type);
- no `Response`: the body is rendered at once into an `HttpResponse`;
- no model instances and no serializer: the page is read as (id, name,
  category_id, status) rows and written as PetSerializer writes a pet;
- no query compilation per request: each statement shape is compiled by the
  ORM once per process and run with the request's parameters;
- no FilterSet per request: PetFilter's validation depends on the `status`
  value alone (a choice filter), so each value is validated once per process;
- no QueryDict when every parameter reads as it is written (nothing to decode);
- no `urlencode` of the carried parameters when re-encoding them would give
  back exactly what the client sent.

`serve` returns None when it cannot answer exactly as DRF would (another view
set-up, a serializer or a filter other than the ones written here, an `Accept` that
needs negotiation, no credentials at all) and DRF's dispatch answers from the start.
Every exception, from the authenticator, a throttle or the page, goes to DRF's
`handle_exception` through a DRF `Request` made only then: the Error body, its
headers and its log line are DRF's.
tests/pets/api/test_hotpath.py plays requests through both paths and compares
status, headers and bytes. API_LIST_FAST_PATH=0 leaves every request to DRF.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import NamedTuple

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django_filters import ChoiceFilter, FilterSet, utils
from django_filters.filterset import BaseFilterSet
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import serializers
from rest_framework.generics import GenericAPIView

from pets.api.serializers import Int64Field
from pets.models import Pet, PetStatus
from petstore.api import direct, pagination

logger = logging.getLogger(__name__)

_RENDERER = direct.RENDERER
# The columns read, in the order `_pets` writes them.
_COLUMNS = ("id", "name", "category_id", "status")
# The serializer `_pets` writes as, field by field: what DRF's Serializer.to_representation
# does with each is its class's to_representation on the attribute named by its source,
# unless it is write-only; a ChoiceField also maps the value through its choices. Any other
# field set (one more field, another class, source or choices) leaves the view to DRF.
_FIELDS = (
    # name, class, source, read_only, write_only, choices
    ("id", Int64Field, "id", False, False, None),
    ("name", serializers.CharField, "name", False, False, None),
    ("categoryId", Int64Field, "category_id", False, False, None),
    ("status", serializers.ChoiceField, "status", False, False, dict(PetStatus.choices)),
)
# The filters `_fetch` applies in SQL, as a FilterSet's filter_queryset would: one exact
# match on `status` (its validation stays the FilterSet's own, `_valid_status`).
_FILTERS = (
    # name, class, field_name, lookup_expr, exclude, distinct, method
    ("status", ChoiceFilter, "status", "exact", False, False, None),
)
# A query parameter that parsing decodes nothing of (no percent-escape, no '+', ASCII), with
# its one '=': QueryDict would read the same name and value.
_AS_WRITTEN = re.compile(r"[A-Za-z0-9_.~:-]+=[A-Za-z0-9_.~:-]*")
# One that urlencode also writes back exactly as it reads (quote_plus leaves these
# characters alone, and escapes ':').
_AS_ENCODED = re.compile(r"[A-Za-z0-9_.~-]+=[A-Za-z0-9_.~-]*")


class Page(NamedTuple):
    body: bytes
    last_id: int | None  # the last pet's id when there is a next page


@functools.cache
def _answers_for(
    view_class: type[GenericAPIView], serializer_class: type | None, filterset_class: type
) -> bool:
    """Whether the view runs exactly what this module runs in its place: the platform's
    checks and renderer (petstore.api.direct), the keyset paginator, the filter
    backend with a FilterSet of `_FILTERS` and a serializer of `_FIELDS`. Asked once per
    view, serializer and FilterSet class; a difference is logged then."""
    differences = direct.differences(view_class) + [
        name
        for name, same in (
            ("pagination", view_class.pagination_class is pagination.KeysetPagination),
            ("filter backends", list(view_class.filter_backends) == [DjangoFilterBackend]),
            ("filters", _filters_as_written(filterset_class)),
            ("serializer", serializer_class is not None and _writes_as(serializer_class)),
        )
        if not same
    ]
    if differences:
        logger.warning(
            "listPets' hot path declines %s (DRF answers its GETs): its %s differ from what "
            "pets.api.hotpath was written for",
            view_class.__qualname__,
            ", ".join(differences),
        )
    return not differences


def _writes_as(serializer_class: type) -> bool:
    """Whether the serializer's output, many=True, is what `_pets` writes: DRF's list and
    Serializer.to_representation over the fields of `_FIELDS`, in that order."""
    if not issubclass(serializer_class, serializers.Serializer):
        return False
    if serializer_class.to_representation is not serializers.Serializer.to_representation:
        return False
    if type(serializer_class(many=True)) is not serializers.ListSerializer:
        return False
    fields = tuple(
        (
            name,
            type(field),
            field.source,
            field.read_only,
            field.write_only,
            getattr(field, "choices", None),
        )
        for name, field in serializer_class().fields.items()
    )
    return fields == _FIELDS


def _filters_as_written(filterset_class: type[FilterSet]) -> bool:
    """Whether the FilterSet filters as `_fetch` does: django-filter's filter_queryset over
    the filters of `_FILTERS`."""
    if filterset_class.filter_queryset is not BaseFilterSet.filter_queryset:
        return False
    filters = tuple(
        (
            name,
            type(filter_),
            filter_.field_name,
            filter_.lookup_expr,
            filter_.exclude,
            filter_.distinct,
            filter_.method,
        )
        for name, filter_ in filterset_class.base_filters.items()
    )
    return filters == _FILTERS


def serve(view: GenericAPIView, request: HttpRequest) -> HttpResponseBase | None:
    """The view's answer to this GET, or None when DRF's dispatch must answer it."""
    serializer_class: type | None = view.serializer_class
    filterset_class: type | None = getattr(view, "filterset_class", None)
    if filterset_class is None or not _answers_for(type(view), serializer_class, filterset_class):
        return None
    if not direct.plain_accept(request):
        return None
    return direct.answer(view, request, lambda _user_auth: _page(request, filterset_class))


def _page(request: HttpRequest, filterset_class: type) -> HttpResponse:
    """The page as DRF's list writes it: filter, then limit and cursor, validated in
    that order; the body; the next link when there is a next page."""
    parts = _parts(request)
    params = request.GET if parts is None else dict(part.split("=") for part in parts)
    raw_status = params.get("status")
    status = _valid_status(filterset_class, raw_status) if raw_status is not None else None
    limit = pagination.parse_limit(params.get("limit"))
    cursor = params.get("cursor")
    after = pagination.decode_cursor(cursor) if cursor is not None else None
    body, last_id = _read_page(status=status, after=after, limit=limit)
    response = HttpResponse(body, content_type=_RENDERER.media_type)
    if last_id is not None:
        response["Link"] = pagination.next_link(
            request.build_absolute_uri(request.path),
            _carried(request, parts),
            limit=limit,
            last_id=last_id,
        )
    return response


def _read_page(*, status: str | None, after: int | None, limit: int) -> Page:
    rows = _fetch(status=status, after=after, size=limit + 1)  # one more: a next page?
    page = rows[:limit]
    return Page(_RENDERER.render(_pets(page)), page[-1][0] if len(rows) > limit else None)


def _valid_status(filterset_class: type, value: str) -> str:
    filterset = _validated_filter(filterset_class, value)
    if not filterset.is_valid():
        raise utils.translate_validation(filterset.errors)
    return filterset.form.cleaned_data["status"]


@functools.lru_cache(maxsize=256)
def _validated_filter(filterset_class: type, status: str) -> FilterSet:
    """The view's FilterSet (PetFilter) validated for this status (as a form reads the last
    value of a parameter). Only read afterwards: shared by requests and threads."""
    filterset = filterset_class({"status": status}, queryset=Pet.objects.none())
    filterset.is_valid()
    return filterset


@functools.cache  # at most 2 x 2 x 100 shapes
def _statement(*, with_status: bool, with_after: bool, size: int) -> str:
    queryset = Pet.objects.values_list(*_COLUMNS)
    # Placeholder values: only the statement is kept. Its parameters come in this
    # order (status, then id), as `_fetch` passes them.
    if with_status:
        queryset = queryset.filter(status="")
    if with_after:
        queryset = queryset.filter(id__gt=0)
    sql, _ = queryset.order_by("id")[:size].query.sql_with_params()
    return sql


def _fetch(*, status: str | None, after: int | None, size: int) -> list[tuple]:
    """Up to `size` pets as _COLUMNS rows in id order: ids above `after`, this status."""
    statement = _statement(with_status=status is not None, with_after=after is not None, size=size)
    params = [value for value in (status, after) if value is not None]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


def _pets(rows: list[tuple]) -> list[dict]:
    """PetSerializer's output for the rows: the columns are already int, str, int and
    a PetStatus value, which its fields write unchanged."""
    return [
        {"id": pk, "name": name, "categoryId": category_id, "status": status}
        for pk, name, category_id, status in rows
    ]


def _parts(request: HttpRequest) -> list[str] | None:
    """The query's parameters as sent, when each one reads as it is written (_AS_WRITTEN)
    and they are within Django's limit on their number; otherwise None, and Django's
    QueryDict (request.GET) reads them. A dict of these parts holds what QueryDict's `get`
    reads (the last value of a name) without building one, which was about a twentieth of
    a list request's instructions (docs/decisions/performance.md, "The list on every read")."""
    query = request.META.get("QUERY_STRING", "")
    most = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS  # QueryDict refuses more (a 400)
    if most is not None and query.count("&") >= most:
        return None
    parts = [part for part in query.split("&") if part]
    return parts if all(_AS_WRITTEN.fullmatch(part) for part in parts) else None


def _carried(request: HttpRequest, parts: list[str] | None) -> list[str]:
    """The next link's other parameters: as sent when every one appears once and is
    written as urlencode would write it back (nearly always); otherwise re-encoded
    from the parsed values, as the paginator does."""
    if parts is not None:
        names = [part.partition("=")[0] for part in parts]
        paging = pagination.PAGING_PARAMS
        carried = [part for part, name in zip(parts, names, strict=True) if name not in paging]
        if len(set(names)) == len(names) and all(_AS_ENCODED.fullmatch(p) for p in carried):
            return carried
    return pagination.carried_params(request.GET)
