"""A strict JSON parser for request bodies."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import IO, Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

# A UTF-16 surrogate code point. JSON's `\ud83d\ude00` pairs decode to one character;
# any surrogate left after decoding came alone (`"\ud800"`) and is no Unicode text:
# it cannot be encoded as UTF-8 (the idempotency fingerprint, the database, the logs).
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate_in(data: object) -> bool:
    """Whether any string of the parsed document (keys included) holds a lone surrogate."""
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


class JSONParser(parsers.JSONParser):
    """DRF's JSONParser with a clearer error, NaN/Infinity always refused, and text
    that is Unicode: a lone surrogate anywhere in the document is a 400.

    The size limit is Django's DATA_UPLOAD_MAX_MEMORY_SIZE (DRF reads
    `request.body`); petstore.api.errors turns its RequestDataTooBig into a 413.
    """

    strict = True  # json.strict_constant: NaN and Infinity are not JSON

    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        try:
            data = super().parse(stream, media_type, parser_context)
        except ParseError as exc:
            detail = str(exc.detail).removeprefix("JSON parse error - ")
            raise ParseError(f"Malformed JSON: {detail}") from None
        except RecursionError:
            # `[[[[...` deeper than the interpreter's recursion limit: a 400, not a 500.
            # The body is already bounded by DATA_UPLOAD_MAX_MEMORY_SIZE (413 above it).
            raise ParseError("Malformed JSON: nested too deeply.") from None
        if _lone_surrogate_in(data):
            raise ParseError("Malformed JSON: a string holds a lone UTF-16 surrogate.")
        return data
