"""Keyset paging for every /v1 list: a bare JSON array plus an RFC 8288 `Link: rel="next"`.

The cursor is the last id of the page, signed (django.core.signing's `<id>:<HMAC>`) so a
client cannot forge or garble it, with the platform's salt (CURSOR_SALT). The next page is
`WHERE id > last ORDER BY id LIMIT n`, which costs the same on page 10,000 as on page 1.
`limit` and the cursor are validated here because DRF's paginators clamp bad values
silently.

`KeysetPagination` is DRF's paginator for a list view (and BaseAPIView.page's); the
functions below are what it is made of, and what listPets' hot path (pets.api.hotpath)
reuses so that both write the same page and the same link.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing
from django.db.models import QuerySet
from django.http import QueryDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination
from rest_framework.request import Request
from rest_framework.response import Response

if TYPE_CHECKING:  # DRF imports its paginators while it defines APIView
    from rest_framework.views import APIView

LIMIT_DEFAULT = 20
LIMIT_MIN = 1
LIMIT_MAX = 100
CURSOR_SALT = "petstore.api.cursor"
_DIGITS = re.compile(r"[0-9]{1,4}")
_ID = re.compile(r"[0-9]{1,19}")
# The parameters a next link sets itself; every other one is carried over.
PAGING_PARAMS = ("cursor", "limit")


@functools.lru_cache(maxsize=4)
def _signer(key: str, fallback_keys: tuple[str, ...]) -> signing.Signer:
    return signing.Signer(key=key, fallback_keys=list(fallback_keys), salt=CURSOR_SALT)


def _cursor_signer() -> signing.Signer:
    """The Signer for the current keys, built once per key rather than per request
    (a Signer reads and prepares its keys when it is made)."""
    return _signer(settings.SECRET_KEY, tuple(settings.SECRET_KEY_FALLBACKS))


def encode_cursor(last_id: int) -> str:
    return _signed(_cursor_signer(), last_id)


@functools.lru_cache(maxsize=1024)
def _signed(signer: signing.Signer, last_id: int) -> str:
    """The cursor of `last_id`, signed once per signer (so per key) and id: the same pages'
    next links are asked again and again (the first page, a status filter), and an HMAC
    with its key derivation was a measurable part of a list request
    (docs/decisions/performance.md, "The list on every read")."""
    return signer.sign(str(last_id))


def _unsign(cursor: str) -> str:
    value = _verified(_cursor_signer(), cursor)
    if value is None:
        raise ValidationError({"cursor": ["Invalid cursor."]})
    return value


@functools.lru_cache(maxsize=1024)
def _verified(signer: signing.Signer, cursor: str) -> str | None:
    """The value `cursor` signs, or None: checked once per set of keys and cursor, since
    the same next links are followed again and again (as `_signed`)."""
    try:
        return signer.unsign(cursor)
    except signing.BadSignature:
        return None


def decode_cursor(cursor: str) -> int:
    value = _unsign(cursor)
    if not _ID.fullmatch(value):  # only ids are signed with this salt; belt and braces
        raise ValidationError({"cursor": ["Invalid cursor."]})
    return int(value)


def parse_limit(raw: str | None) -> int:
    if raw is None:
        return LIMIT_DEFAULT
    if not _DIGITS.fullmatch(raw) or not LIMIT_MIN <= int(raw) <= LIMIT_MAX:
        raise ValidationError(
            {"limit": [f"Must be an integer between {LIMIT_MIN} and {LIMIT_MAX}."]}
        )
    return int(raw)


def carried_params(query: QueryDict) -> list[str]:
    """The query's other parameters for the next link, re-encoded from the parsed
    values: the last value of each name, in the order the names first appear."""
    return [urlencode({name: value}) for name, value in query.items() if name not in PAGING_PARAMS]


def next_link(url: str, carried: list[str], *, limit: int, last_id: int) -> str:
    """The `Link` header value to the page after `last_id`. Ours come last, so they win
    over a differently spelled duplicate (`%63ursor=`): the last value counts. A signed
    cursor is URL-safe base64 and ':' as it is."""
    query = [*carried, f"limit={limit}", f"cursor={encode_cursor(last_id)}"]
    return f'<{url}?{"&".join(query)}>; rel="next"'


class KeysetPagination(BasePagination):
    def __init__(self, *, newest_first: bool = False) -> None:
        # A log reads newest first: `WHERE id < last ORDER BY id DESC`, as cheap.
        self.newest_first = newest_first

    def paginate_queryset(
        self,
        queryset: QuerySet[Any],  # type: ignore[override]  # a queryset only: it filters by id
        request: Request,
        view: APIView | None = None,
    ) -> list[Any]:
        """The page of `queryset` (ordered by id, or by id descending when newest_first)
        after the cursor, `limit` long."""
        self.request = request
        self.limit = parse_limit(request.query_params.get("limit"))
        cursor = request.query_params.get("cursor")
        if cursor is not None:
            after = decode_cursor(cursor)
            queryset = (
                queryset.filter(id__lt=after)
                if self.newest_first
                else queryset.filter(id__gt=after)
            )
        rows = list(queryset[: self.limit + 1])  # one more: is there a next page?
        self.has_next = len(rows) > self.limit
        self.page = rows[: self.limit]
        return self.page

    def get_paginated_response(self, data: Any) -> Response:
        if not self.has_next:
            return Response(data)
        link = next_link(
            self.request.build_absolute_uri(self.request.path),
            carried_params(self.request.query_params),
            limit=self.limit,
            last_id=self.page[-1].pk,
        )
        return Response(data, headers={"Link": link})

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return schema  # the body stays a bare array of Pet

    def get_schema_operation_parameters(self, view: APIView) -> list[dict[str, Any]]:
        return copy.deepcopy(QUERY_PARAMETERS)


# `limit` and `cursor` in the OpenAPI document: the paginator's, and PARAMETERS for a view
# that pages by hand (BaseAPIView.page), whose schema drf-spectacular cannot infer.
QUERY_PARAMETERS: list[dict[str, Any]] = [
    {
        "name": "limit",
        "in": "query",
        "required": False,
        "description": "Maximum number of items returned.",
        "schema": {
            "type": "integer",
            "minimum": LIMIT_MIN,
            "maximum": LIMIT_MAX,
            "default": LIMIT_DEFAULT,
        },
    },
    {
        "name": "cursor",
        "in": "query",
        "required": False,
        "description": (
            "Opaque position in the list. Do not build it: follow the "
            '`Link: <...>; rel="next"` header of the previous page.'
        ),
        "schema": {"type": "string"},
    },
]
PARAMETERS = [
    OpenApiParameter(p["name"], p["schema"], OpenApiParameter.QUERY, description=p["description"])
    for p in QUERY_PARAMETERS
]
LINK_HEADER = OpenApiParameter(
    "Link",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[200],
    description='RFC 8288 `<url>; rel="next"` to the next page; absent on the last page.',
)
