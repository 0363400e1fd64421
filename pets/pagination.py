"""Keyset paging for listPets: a bare JSON array plus an RFC 8288 `Link: rel="next"`.

The cursor is the last id of the page, signed (django.core.signing) so a client
cannot forge or garble it; the next page is `WHERE id > last ORDER BY id LIMIT n`,
which costs the same on page 10,000 as on page 1. `limit` and the cursor are
validated here because DRF's paginators clamp bad values silently.

The rows come from a fetch function (pets.selectors.pet_page) as tuples whose
first column is the id: no queryset is compiled, no model instance is built.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from django.core import signing
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination
from rest_framework.response import Response

LIMIT_DEFAULT = 20
LIMIT_MIN = 1
LIMIT_MAX = 100
_CURSOR_SALT = "pets.list.cursor"
_DIGITS = re.compile(r"[0-9]{1,4}")


def encode_cursor(last_id: int) -> str:
    return signing.Signer(salt=_CURSOR_SALT).sign_object(last_id)


def decode_cursor(cursor: str) -> int:
    try:
        value = signing.Signer(salt=_CURSOR_SALT).unsign_object(cursor)
    except (signing.BadSignature, ValueError, UnicodeError):
        raise ValidationError({"cursor": ["Invalid cursor."]}) from None
    if type(value) is not int:
        raise ValidationError({"cursor": ["Invalid cursor."]})
    return value


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
        self.limit = parse_limit(request.query_params.get("limit"))
        cursor = request.query_params.get("cursor")
        after = decode_cursor(cursor) if cursor is not None else None
        rows = fetch(after=after, size=self.limit + 1)  # one more: is there a next page?
        self.has_next = len(rows) > self.limit
        self.page = rows[: self.limit]
        return self.page

    def next_link(self) -> str | None:
        if not self.has_next:
            return None
        params = {
            key: value
            for key, value in self.request.query_params.items()
            if key not in {"cursor", "limit"}
        }
        params["limit"] = self.limit
        params["cursor"] = encode_cursor(self.page[-1][0])  # the id of the last row
        url = self.request.build_absolute_uri(self.request.path) + "?" + urlencode(params)
        return f'<{url}>; rel="next"'

    def get_paginated_response(self, data):
        link = self.next_link()
        return Response(data, headers={"Link": link} if link else None)

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
