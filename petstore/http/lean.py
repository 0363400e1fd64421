"""The lean handler: GETs to the paths an app registers, without the middleware that
never acts on an API response.

Every request through Django's handler runs the whole MIDDLEWARE list, and an API
request pays for sessions, CSRF, authentication, messages, static files, the HTML
pages' Content-Security-Policy and the sign-in lock-out, none of which can change
its answer: the API authenticates by bearer key, DRF's views are CSRF-exempt, and
nothing on its path reads a session, a message or a static file, or writes HTML.
For a path registered here (an app does it in its AppConfig.ready, so this ground
floor imports no app), a GET runs the same chain less those middleware, in the
same order, then the URL's own view; everything else in MIDDLEWARE (the request
id, forwarded headers, host routing, the security headers, host validation and
Content-Length, X-Frame-Options, and any middleware added later, such as a request
counter) runs as before. The responses are the full handler's, byte for byte:
tests/pets/api/test_hotpath.py plays both through this WSGI application.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core import signals
from django.core.handlers.exception import convert_exception_to_response
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest, get_script_name
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import ResolverMatch, get_urlconf, resolve, set_script_prefix, set_urlconf
from django.utils.log import log_response
from django.utils.module_loading import import_string

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
    }
)

# Django's middleware types allow an awaitable answer, which a sync chain never gives.
Handler = Callable[[HttpRequest], Any]
StartResponse = Callable[..., Any]

# path -> whether the lean handler serves it now (a switch read at each request).
_registered: dict[str, Callable[[], bool]] = {}


def register(path: str, enabled: Callable[[], bool]) -> None:
    """Serve GETs of `path` (exactly, no query) with the lean handler while `enabled()`."""
    _registered[path] = enabled


@functools.lru_cache(maxsize=64)
def _resolve(path: str, urlconf: str | None) -> ResolverMatch:
    """A registered path's match, found once: it is one exact path, and walking every
    URL pattern to it again was a measurable part of each request."""
    return resolve(path, urlconf)


def _view(request: HttpRequest) -> HttpResponseBase:
    """What Django's handler does once the middleware are passed: the URL's view,
    then the render of a template response (DRF's Response is one)."""
    match = _resolve(request.path_info, get_urlconf())
    request.resolver_match = match
    response = match.func(request, *match.args, **match.kwargs)
    render = getattr(response, "render", None)
    return render() if callable(render) else response


def _chain(middleware: Iterable[str]) -> Handler:
    handler: Handler = convert_exception_to_response(_view)
    for path in reversed([path for path in middleware if path not in SKIPPED]):
        handler = convert_exception_to_response(import_string(path)(handler))
    return handler


class LeanWSGIHandler:
    """Django's WSGI application, but for the registered GETs."""

    def __init__(self, django: WSGIHandler) -> None:
        self.django = django
        self._chains: dict[tuple[str, ...], Handler] = {}  # by MIDDLEWARE (tests change it)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        enabled = _registered.get(environ.get("PATH_INFO", ""))
        if (
            enabled is None
            or environ.get("REQUEST_METHOD") != "GET"
            or environ.get("SCRIPT_NAME")
            or not enabled()
        ):
            return self.django(environ, start_response)
        return self.serve(environ, start_response)

    def serve(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        # As WSGIHandler.__call__ and BaseHandler.get_response do, around the shorter chain.
        set_script_prefix(get_script_name(environ))
        signals.request_started.send(sender=WSGIHandler, environ=environ)
        request = WSGIRequest(environ)
        set_urlconf(settings.ROOT_URLCONF)
        response: HttpResponse = self._chain()(request)
        if response.status_code >= 400:
            log_response(
                "%s: %s", response.reason_phrase, request.path, response=response, request=request
            )
        headers = [
            *response.items(),
            *(("Set-Cookie", cookie.output(header="")) for cookie in response.cookies.values()),
        ]
        start_response(f"{response.status_code} {response.reason_phrase}", headers)
        return response  # the server's close() sends request_finished, as Django's does

    def _chain(self) -> Handler:
        key = tuple(settings.MIDDLEWARE)
        chain = self._chains.get(key)
        if chain is None:
            chain = self._chains[key] = _chain(key)
        return chain
