"""JSON out through orjson: the same bytes as DRF's JSONRenderer, much faster.

DRF's renderer runs the standard library's `json.dumps` with a Python encoder
class, a large share of a list request (docs/decisions/performance.md). The output
is kept byte for byte: compact separators, UTF-8 (UNICODE_JSON), U+2028/U+2029
escaped as DRF does, `None` as an empty body. Values orjson does not know
(lazy translations, Decimal, ...) go through DRF's own encoder, and an `indent`
asked for in `Accept` is served by DRF's renderer, which knows how.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

_fallback = JSONEncoder()


def _default(obj: Any) -> Any:
    return _fallback.default(obj)


class ORJSONRenderer(JSONRenderer):
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        # DRF's get_indent reads no indent from a missing media type (its stubs want a str).
        if self.get_indent(accepted_media_type or "", renderer_context or {}) is not None:
            return super().render(data, accepted_media_type, renderer_context)
        body = orjson.dumps(data, default=_default)
        # Like DRF: these two are valid JSON but not valid JavaScript string content.
        # Their first byte is looked for first: one scan of the body when, as nearly
        # always, neither is there.
        if b"\xe2" in body and (b"\xe2\x80\xa8" in body or b"\xe2\x80\xa9" in body):
            body = body.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        return body
