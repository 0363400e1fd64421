"""Answering a /v1 request without DRF's dispatch, with DRF's checks and DRF's answers.

An operation's fast path (listPets' `pets/api/hotpath.py`, createPet's
`pets/api/createpath.py`) runs the platform's checks on Django's own request, which holds
all they read (`META`, `method`, `user`, `auth`): the bearer key, the key's scope and the two
rate limits, each once, in DRF's order (`admit`). What it cannot answer itself it hands to
DRF with the checks' outcome, so nothing is checked or counted twice: an exception to DRF's
`handle_exception` (`drf_error`), a request it declines after the checks to the view's own
handler (`drf_handler`). Both make the DRF `Request` only then, so the Error body, its
headers and its log line, and every answer of the handler, are DRF's own.

`answer` is a fast path's whole round: the checks, its own work, and either of those hand-offs
for whatever raises. A fast path answers only for a view that runs exactly these components
(`differences`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponseBase
from rest_framework.exceptions import PermissionDenied, Throttled
from rest_framework.permissions import IsAuthenticated
from rest_framework.views import APIView

from petstore.api.authentication import BearerKeyAuthentication
from petstore.api.permissions import KeyScopes
from petstore.api.renderers import ORJSONRenderer
from petstore.api.throttles import AddressThrottle, KeyThrottle

AUTHENTICATOR = BearerKeyAuthentication()
SCOPES = KeyScopes()
THROTTLES = (KeyThrottle, AddressThrottle)
RENDERER = ORJSONRenderer()
# The Accept values for which DRF's negotiation can only choose the one renderer, as is.
PLAIN_ACCEPT = ("*/*", RENDERER.media_type)

UserAuth = tuple[Any, Any]


def differences(view_class: type[APIView]) -> list[str]:
    """What the view runs other than `admit`'s checks and the orjson renderer (DRF's default
    here): empty when a fast path may answer for it."""
    return [
        name
        for name, same in (
            ("authentication", view_class.authentication_classes == [BearerKeyAuthentication]),
            ("permissions", view_class.permission_classes == [IsAuthenticated, KeyScopes]),
            ("throttles", list(view_class.throttle_classes) == list(THROTTLES)),
            ("renderers", view_class.renderer_classes == [ORJSONRenderer]),
        )
        if not same
    ]


def plain_accept(request: HttpRequest) -> bool:
    """Whether the `Accept` needs no negotiation (absent, `*/*`, the renderer's type)."""
    return request.META.get("HTTP_ACCEPT", "*/*") in PLAIN_ACCEPT


def admit(view: APIView, request: HttpRequest) -> UserAuth | None:
    """DRF's `initial` checks on Django's request: the caller's user and key, or None when
    the request carries no credentials (DRF decides what an anonymous request gets, and
    nothing was counted). Raises what DRF's checks raise: a refused key, a missing scope, a
    rate limit."""
    user_auth = AUTHENTICATOR.authenticate(request)
    if user_auth is None:
        return None
    # As DRF's Request sets them on the Django request it wraps; the throttles read them.
    request.user, request.auth = user_auth  # type: ignore[attr-defined]
    # DRF's `check_permissions`: an authenticated user passes IsAuthenticated.
    if not SCOPES.has_permission(request, view):
        raise PermissionDenied()
    _check_throttles(view, request)
    return user_auth


def answer(
    view: APIView,
    request: HttpRequest,
    work: Callable[[UserAuth], HttpResponseBase],
) -> HttpResponseBase | None:
    """A fast path's whole answer: `admit`'s checks, then `work` with the caller, DRF's
    `Allow` header on what it answers; any exception answered as DRF's dispatch answers it.
    None when the request carries no credentials (DRF decides what an anonymous request
    gets)."""
    user_auth = None
    try:
        user_auth = admit(view, request)
        if user_auth is None:
            return None
        response = work(user_auth)
    except Exception as exc:  # noqa: BLE001 - DRF's own handling decides, as in its dispatch
        return drf_error(view, request, exc, user_auth)
    for name, value in view.default_response_headers.items():  # `Allow`, as DRF sets it
        response[name] = value
    return response


def _check_throttles(view: APIView, request: HttpRequest) -> None:
    """DRF's `check_throttles`: every limit is asked (each counts the request once and
    records its count for the RateLimit field); over any of them, Throttled with the
    longest wait."""
    # Our throttles read only `auth` and META, which the Django request carries (set above).
    waits = [
        throttle.wait()
        for throttle in (throttle_class() for throttle_class in THROTTLES)
        if not throttle.allow_request(request, view)
    ]
    if waits:
        raise Throttled(max(waits))


def drf_error(
    view: APIView, request: HttpRequest, exc: Exception, user_auth: UserAuth | None
) -> HttpResponseBase:
    """What DRF's dispatch answers when `exc` escapes the checks or the fast path."""
    drf_request = _drf_request(view, request, user_auth)
    response = view.handle_exception(exc)
    return view.finalize_response(drf_request, response)


def drf_handler(
    view: APIView, request: HttpRequest, user_auth: UserAuth, handler: Callable[..., Any]
) -> HttpResponseBase:
    """What DRF's dispatch answers from after its checks (`admit` ran them): the view's
    `handler` on a DRF Request holding the caller, its exceptions handled as DRF does."""
    drf_request = _drf_request(view, request, user_auth)
    try:
        response = handler(drf_request)
    except Exception as exc:  # noqa: BLE001 - DRF's own handling decides, as in its dispatch
        response = view.handle_exception(exc)
    return view.finalize_response(drf_request, response)


def _drf_request(view: APIView, request: HttpRequest, user_auth: UserAuth | None) -> Any:
    """The DRF Request and view state DRF's dispatch and `initial` set up, with the outcome
    of the checks so far, so that nothing authenticates twice."""
    view.args, view.kwargs, view.format_kwarg = (), {}, None
    view.headers = view.default_response_headers
    drf_request = view.initialize_request(request)
    drf_request.user, drf_request.auth = user_auth or (AnonymousUser(), None)
    drf_request.accepted_renderer, drf_request.accepted_media_type = (
        view.perform_content_negotiation(drf_request)
    )
    drf_request.version, drf_request.versioning_scheme = view.determine_version(drf_request)
    view.request = drf_request
    return drf_request
