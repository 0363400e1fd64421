"""A GET answered by a DRF view's own checks and handler, without DRF's `Request` wrapper.

listPets is the API's hottest operation, and the benchmark (issue 5) holds it
to 0.8 of a bare Django view that runs the same SQL. Without the query, a list
request took ~160 µs of Python through DRF's dispatch against ~120 µs through
this module (docs/decisions/performance.md): DRF's `Request` wraps the Django
request and every attribute read the view, the paginator, the authenticator
and the renderer make on it goes through `Request.__getattr__`, and each
request builds its own parser, authenticator, negotiator and permission
objects. PetsView hands a GET to `serve`, which runs DRF's sequence on the
Django request itself:

1. content negotiation, for the `Accept` values that need none: absent, `*/*`
   or the one renderer's media type. Anything else returns None: DRF answers
   from the start (406, or an `indent` parameter);
2. the view's authenticators, in order, as DRF's `Request` runs them. No
   credentials at all returns None (DRF decides what an anonymous request gets:
   401 here);
3. the view's permissions: a refusal returns None before anything is counted;
4. the view's throttles, through DRF's `check_throttles`;
5. the view's handler, unchanged: it reads the request through `GET`, `META`,
   `path`, `auth` and `accepted_renderer`, which both kinds of request have;
6. DRF's `finalize_response` (the `Allow` header).

Every exception, from an authenticator, a throttle or the handler, goes to
DRF's `handle_exception` through a DRF `Request` made only then and holding
the user already authenticated: the Error body, its headers (`WWW-Authenticate`,
`Retry-After`) and its log line are the ones DRF and petstore.api.errors write, and
nothing runs twice. tests/pets/test_fastpath.py checks that both paths answer
alike, byte for byte, and the rest of the list suite runs on this one.
API_LIST_FAST_PATH=0 turns it off.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponseBase
from rest_framework.views import APIView

from petstore.api.renderers import plain_choice


def serve(view: APIView, request: HttpRequest, *args, **kwargs) -> HttpResponseBase | None:
    """The view's answer to this GET, or None when DRF's dispatch must answer it."""
    chosen = plain_choice(request, view.get_renderers())
    if chosen is None:
        return None
    view.args, view.kwargs, view.request = args, kwargs, request
    view.headers = view.default_response_headers
    view.format_kwarg = None
    user_auth = None
    try:
        for authenticator in view.get_authenticators():
            user_auth = authenticator.authenticate(request)
            if user_auth is not None:
                break
        else:
            return None
        request.user, request.auth = user_auth  # as DRF's Request sets them on Django's
        if not all(
            permission.has_permission(request, view) for permission in view.get_permissions()
        ):
            return None
        request.accepted_renderer, request.accepted_media_type = chosen  # as JSONNegotiation
        view.check_throttles(request)
        response = view.get(request, *args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - DRF's own handling decides, as in its dispatch
        return _drf_error(view, request, exc, user_auth)
    return view.finalize_response(request, response, *args, **kwargs)


def _drf_error(view: APIView, request: HttpRequest, exc: Exception, user_auth) -> HttpResponseBase:
    """What DRF's dispatch answers when `exc` escapes the checks or the handler."""
    drf_request = view.initialize_request(request, *view.args, **view.kwargs)
    # The outcome of authentication so far, so that nothing authenticates twice.
    drf_request.user, drf_request.auth = user_auth or (AnonymousUser(), None)
    drf_request.accepted_renderer, drf_request.accepted_media_type = (
        view.perform_content_negotiation(drf_request)
    )
    view.request = drf_request
    response = view.handle_exception(exc)
    return view.finalize_response(drf_request, response, *view.args, **view.kwargs)
