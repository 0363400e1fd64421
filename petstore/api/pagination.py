"""Keyset paging for listPets: a bare JSON array plus an RFC 8288 `Link: rel="next"`.

The cursor is the last id of the page, signed (django.core.signing's `<id>:<HMAC>`)
so a client cannot forge or garble it; the next page is `WHERE id > last ORDER BY
id LIMIT n`, which costs the same on page 10,000 as on page 1. `limit` and the
cursor are validated here because DRF's paginators clamp bad values silently.

The rows come from a fetch function (pets.selectors.pet_page) as tuples whose
first column is the id: no queryset is compiled, no model instance is built.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination

from petstore.api.renderers import rendered_response

LIMIT_DEFAULT = 20
LIMIT_MIN = 1
LIMIT_MAX = 100
_CURSOR_SALT = "pets.list.cursor"
_DIGITS = re.compile(r"[0-9]{1,4}")
_ID = re.compile(r"[0-9]{1,19}")
# The parameters a next link sets itself; every other one is carried over as sent.
_PAGING_PARAMS = ("cursor", "limit")
# A query parameter a URL can carry as is: unreserved and sub-delimiter characters, and %XX.
_URL_SAFE = re.compile(r"[A-Za-z0-9\-._~!$'()*+,;=:@/?%]*")


def _carried_params(request) -> list[str]:
    """The query's parameters other than the paging ones, for the next link.

    As the client sent them when they are URL-safe (nearly always): re-encoding
    them with urlencode was ~10 % of a list request. Otherwise (raw spaces or
    non-ASCII bytes, which test clients and some proxies let through) they are
    re-encoded from the parsed values, last value per name, as UTF-8.
    """
    parts = [
        part
        for part in request.META.get("QUERY_STRING", "").split("&")
        if part and part.partition("=")[0] not in _PAGING_PARAMS
    ]
    if all(_URL_SAFE.fullmatch(part) for part in parts):
        return parts
    params = request.GET.items()
    return [urlencode({name: value}) for name, value in params if name not in _PAGING_PARAMS]


@functools.lru_cache(maxsize=4)
def _signer(key: str, fallback_keys: tuple[str, ...]) -> signing.Signer:
    return signing.Signer(key=key, fallback_keys=list(fallback_keys), salt=_CURSOR_SALT)


def _cursor_signer() -> signing.Signer:
    """The Signer for the current keys, built once per key rather than per request
    (a Signer reads and prepares its keys when it is made)."""
    return _signer(settings.SECRET_KEY, tuple(settings.SECRET_KEY_FALLBACKS))


def encode_cursor(last_id: int) -> str:
    return _cursor_signer().sign(str(last_id))


def decode_cursor(cursor: str) -> int:
    try:
        value = _cursor_signer().unsign(cursor)
    except signing.BadSignature:
        raise ValidationError({"cursor": ["Invalid cursor."]}) from None
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


class KeysetPagination(BasePagination):
    def paginate_rows(self, request, fetch) -> list[tuple]:
        """The page: `fetch(after=<last id of the previous page or None>, size=...)`
        returns up to `size` rows in id order, the id first."""
        self.request = request
        # GET: DRF's query_params, and what a Django request (pets.fastpath) has too.
        self.limit = parse_limit(request.GET.get("limit"))
        cursor = request.GET.get("cursor")
        after = decode_cursor(cursor) if cursor is not None else None
        rows = fetch(after=after, size=self.limit + 1)  # one more: is there a next page?
        self.has_next = len(rows) > self.limit
        self.page = rows[: self.limit]
        return self.page

    def next_link(self) -> str | None:
        if not self.has_next:
            return None
        # Ours come last, so they win over a differently spelled duplicate (%63ursor=...):
        # the last value counts. A signed cursor is URL-safe base64 and ':' as it is.
        query = _carried_params(self.request)
        query.append(f"limit={self.limit}")
        query.append(f"cursor={encode_cursor(self.page[-1][0])}")  # the id of the last row
        url = self.request.build_absolute_uri(self.request.path)
        return f'<{url}?{"&".join(query)}>; rel="next"'

    def get_paginated_response(self, data):
        link = self.next_link()
        return rendered_response(self.request, data, headers={"Link": link} if link else None)

    def get_paginated_response_schema(self, schema):
        return schema  # the body stays a bare array of Pet

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": "limit",
                "in": "query",
                "required": False,
                "description": "Maximum number of pets returned.",
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


LINK_HEADER = OpenApiParameter(
    "Link",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[200],
    description='RFC 8288 `<url>; rel="next"` to the next page; absent on the last page.',
)
