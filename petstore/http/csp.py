"""Content-Security-Policy on every HTML page the application renders.

The dashboard, sign-in and admin pages load scripts and styles only from our own
origin: no inline script, no inline style, no framing, forms post back to us.
The one page that needs more is the Swagger UI (drf-spectacular's template has
one inline <script> with its configuration and one inline <style>): on that page
only, each inline block is allowed by its SHA-256 hash, computed from the very
response being sent, so nothing else inline can run there either.

Project pages served on custom domains are answered by
domains.routing.middleware.HostRoutingMiddleware before this middleware runs; they are
the customer's content and carry no policy of ours.
"""

from __future__ import annotations

import base64
import hashlib
import re

POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "frame-ancestors": ["'none'"],
    "form-action": ["'self'"],
    "base-uri": ["'none'"],
}
# Pages whose inline <script>/<style> blocks are allowed by hash (the Swagger UI).
HASHED_INLINE_PATHS = ("/v1/docs/",)

_INLINE = re.compile(rb"<(script|style)(?:\s[^>]*)?>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
_HAS_SRC = re.compile(rb"<script\s[^>]*\bsrc\s*=", re.IGNORECASE)


def render(policy: dict[str, list[str]]) -> str:
    return "; ".join(" ".join([name, *sources]) for name, sources in policy.items())


DEFAULT_HEADER = render(POLICY)


def _sha256(block: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(block).digest()).decode() + "'"


def hashed_policy(html: bytes) -> str:
    """POLICY plus the hash of each inline <script> and <style> block of `html`."""
    policy = {name: list(sources) for name, sources in POLICY.items()}
    for match in _INLINE.finditer(html):
        tag, body = match.group(1).lower(), match.group(2)
        if tag == b"script" and _HAS_SRC.match(match.group(0)):
            continue  # an external script: 'self' covers it
        if body.strip():
            directive = "script-src" if tag == b"script" else "style-src"
            policy[directive].append(_sha256(body))
    return render(policy)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        content_type = response.get("Content-Type", "")
        if not content_type.startswith("text/html") or "Content-Security-Policy" in response:
            return response
        if request.path in HASHED_INLINE_PATHS and not response.streaming:
            response["Content-Security-Policy"] = hashed_policy(response.content)
        else:
            response["Content-Security-Policy"] = DEFAULT_HEADER
        return response
