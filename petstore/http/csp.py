"""Content-Security-Policy on every HTML page the application renders.

The dashboard, sign-in, admin and API docs pages load scripts and styles only from our
own origin: no inline script, no inline style, no framing, forms post back to us. The
Swagger UI page takes its configuration script from its own URL (drf-spectacular's split
view) and its style from a file (templates/api/swagger_ui.html), so it needs nothing more.

Project pages served on custom domains are answered by
domains.routing.middleware.HostRoutingMiddleware before this middleware runs; they are
the customer's content and carry no policy of ours.
"""

from __future__ import annotations

POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "frame-ancestors": ["'none'"],
    "form-action": ["'self'"],
    "base-uri": ["'none'"],
}


def render(policy: dict[str, list[str]]) -> str:
    return "; ".join(" ".join([name, *sources]) for name, sources in policy.items())


DEFAULT_HEADER = render(POLICY)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        content_type = response.get("Content-Type", "")
        if not content_type.startswith("text/html") or "Content-Security-Policy" in response:
            return response
        response["Content-Security-Policy"] = DEFAULT_HEADER
        return response
