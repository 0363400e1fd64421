"""A strict, size-limited JSON parser for request bodies."""

from __future__ import annotations

import json

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from pets.exceptions import PayloadTooLarge


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


class JSONParser(parsers.JSONParser):
    """DRF's JSONParser, plus: 413 above DATA_UPLOAD_MAX_MEMORY_SIZE (DRF reads the
    raw stream, which Django does not limit), and NaN/Infinity refused."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH", "") if request is not None else ""
        if declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(f"Request body is larger than {limit} bytes.")
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise PayloadTooLarge(f"Request body is larger than {limit} bytes.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return json.loads(raw.decode(encoding), parse_constant=_reject_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"Malformed JSON: {exc}") from None
