"""A strict JSON parser for request bodies."""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSONParser with a clearer error and NaN/Infinity always refused.

    The size limit is Django's DATA_UPLOAD_MAX_MEMORY_SIZE (DRF reads
    `request.body`); petstore.api.errors turns its RequestDataTooBig into a 413.
    """

    strict = True  # json.strict_constant: NaN and Infinity are not JSON

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except ParseError as exc:
            detail = str(exc.detail).removeprefix("JSON parse error - ")
            raise ParseError(f"Malformed JSON: {detail}") from None
        except RecursionError:
            # `[[[[...` deeper than the interpreter's recursion limit: a 400, not a 500.
            # The body is already bounded by DATA_UPLOAD_MAX_MEMORY_SIZE (413 above it).
            raise ParseError("Malformed JSON: nested too deeply.") from None
