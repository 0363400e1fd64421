"""The lean handler: the requests an app registers (a URL and its methods), without the
middleware that never acts on an API response.

Every request through Django's handler runs the whole MIDDLEWARE list, and an API
request pays for sessions, CSRF, authentication, messages, static files, the HTML
pages' Content-Security-Policy and the sign-in lock-out, none of which can change
its answer: the API authenticates by bearer key, DRF's views are CSRF-exempt, and
nothing on its path reads a session, a message or a static file, or writes HTML.
For a URL registered here by name with its methods (an app does it in its
AppConfig.ready, so this ground floor imports no app), such a request runs the same
chain less those middleware, in
the same order, then the URL's own view; everything else in MIDDLEWARE (the request
id, forwarded headers, host routing, the security headers, host validation and
Content-Length, X-Frame-Options, and any middleware added later, such as a request
counter) runs as before.

Both chains are Django's own: the handler is a WSGIHandler (the full chain, for every
other request), and the registered requests go to a second WSGIHandler whose
`load_middleware` ran on the shorter list. Request handling, view and template-response
middleware, resolution, ATOMIC_REQUESTS, error logging and the WSGI answer are Django's
code on both; the one thing added is that the short chain keeps each registered URL's
match instead of walking every URL pattern to it again. The responses are the full
handler's, byte for byte: tests/pets/api/test_hotpath.py plays both through this WSGI
application.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpRequest, HttpResponseBase
from django.urls import ResolverMatch, get_script_prefix, reverse, set_urlconf

# What no API response needs: each one either acts only on what an API request never
# carries or reads (a session or CSRF cookie, a signed-in user, messages, a static file's
# path, a sign-in form), or only on HTML responses.
SKIPPED = frozenset(
    {
        "petstore.http.health.ProbeMiddleware",  # /healthz and /readyz only
        "petstore.http.csp.ContentSecurityPolicyMiddleware",  # text/html only
        "whitenoise.middleware.WhiteNoiseMiddleware",
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        "django.contrib.messages.middleware.MessageMiddleware",
        "axes.middleware.AxesMiddleware",
        "petstore.http.unavailable.DatabaseUnavailableMiddleware",  # pages; DRF answers /v1
        # Who acts, for the audit log: an app registers only methods whose writes it does not
        # audit (a GET changes nothing; a pet's create is in no audit log).
        "petstore.actors.ActorMiddleware",
    }
)

StartResponse = Callable[..., Any]

# URL name -> its methods, and whether the lean handler serves them now (a switch read at
# each request).
_registered: dict[str, tuple[frozenset[str], Callable[[], bool]]] = {}


def register(
    url_name: str, enabled: Callable[[], bool], methods: tuple[str, ...] = ("GET",)
) -> None:
    """Serve `methods` of the URL named `url_name` (its exact path, no arguments, any
    query) with the short chain while `enabled()`. The path is reversed when a handler is
    made, after every app's ready()."""
    _registered[url_name] = (frozenset(methods), enabled)


class ShortChainHandler(WSGIHandler):
    """Django's WSGI handler on MIDDLEWARE less SKIPPED, for registered URLs only."""

    def __init__(self) -> None:
        # (path, urlconf) -> its match; only registered paths reach this handler.
        self.matches: dict[tuple[str, Any], ResolverMatch] = {}
        super().__init__()

    def load_middleware(self, is_async: bool = False) -> None:
        # Django's loading, unchanged, on the shorter list: BaseHandler.load_middleware reads
        # settings.MIDDLEWARE and nothing else says which middleware to load. The list is
        # put back at once; the application is made when the server imports it, before it
        # serves any request (and a test makes it on its own thread).
        full = settings.MIDDLEWARE
        settings.MIDDLEWARE = [path for path in full if path not in SKIPPED]
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = full

    def resolve_request(self, request: HttpRequest) -> ResolverMatch:
        # Django's resolution once per path and urlconf: a registered URL is one exact
        # path, and walking every URL pattern to it again was a measurable part of each
        # request (docs/decisions/performance.md).
        key = (request.path_info, getattr(request, "urlconf", settings.ROOT_URLCONF))
        match = self.matches.get(key)
        if match is None:
            match = self.matches[key] = super().resolve_request(request)
            return match
        if hasattr(request, "urlconf"):
            set_urlconf(request.urlconf)  # as Django's resolution does
        request.resolver_match = match
        return match


class LeanWSGIHandler(WSGIHandler):
    """Django's WSGI application, but for the registered requests."""

    def __init__(self) -> None:
        super().__init__()
        self.short = ShortChainHandler()
        # path -> its methods and switch. Served only for an empty SCRIPT_NAME (below), so
        # the path is the one reversed in the project's urlconf, without any script prefix.
        prefix = get_script_prefix()
        self.paths = {
            "/" + reverse(name, urlconf=settings.ROOT_URLCONF).removeprefix(prefix): registered
            for name, registered in _registered.items()
        }

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> HttpResponseBase:
        registered = self.paths.get(environ.get("PATH_INFO", ""))
        if (
            registered is not None
            and environ.get("REQUEST_METHOD") in registered[0]
            and not environ.get("SCRIPT_NAME")
            and registered[1]()
        ):
            return self.serve(environ, start_response)
        return super().__call__(environ, start_response)

    def serve(self, environ: dict[str, Any], start_response: StartResponse) -> HttpResponseBase:
        """A registered request, through the short chain."""
        return self.short(environ, start_response)
