"""The Error body `{code, message, status}` for every error under /v1.

DRF exceptions go through `exception_handler` (REST_FRAMEWORK["EXCEPTION_HANDLER"]);
unknown paths under /v1 hit `unknown_path` (the last route of pets.api.urls, so it
works with DEBUG on too); `handler400` / `handler404` / `handler500` cover what escapes
both (a request Django itself refuses as suspicious: too many parameters, say).
"""

from __future__ import annotations

import logging
import math
import sys
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import set_rollback

from petstore.api.exceptions import (
    BadRequest,
    ErrorCode,
    InsufficientScope,
    KeyExpired,
    KeysRefused,
    PayloadTooLarge,
    Refused,
    ServiceUnavailable,
)
from petstore.http.unavailable import DATABASE_UNAVAILABLE, log_unavailable, unavailable_page

log = logging.getLogger(__name__)
# What a request Django refuses as suspicious is told (Django's own 400 says nothing more).
SUSPICIOUS = "The request was refused: too many parameters, or a malformed one."


_CODE_BY_CLASS: list[tuple[type[exceptions.APIException], str]] = [
    (exceptions.ValidationError, ErrorCode.VALIDATION_ERROR),
    (exceptions.ParseError, ErrorCode.BAD_REQUEST),
    (exceptions.NotAuthenticated, ErrorCode.UNAUTHORIZED),
    (KeyExpired, ErrorCode.KEY_EXPIRED),
    (exceptions.AuthenticationFailed, ErrorCode.UNAUTHORIZED),
    (InsufficientScope, ErrorCode.INSUFFICIENT_SCOPE),
    (exceptions.PermissionDenied, ErrorCode.FORBIDDEN),
    (exceptions.NotFound, ErrorCode.NOT_FOUND),
    (exceptions.MethodNotAllowed, ErrorCode.METHOD_NOT_ALLOWED),
    (exceptions.NotAcceptable, ErrorCode.NOT_ACCEPTABLE),
    (exceptions.UnsupportedMediaType, ErrorCode.UNSUPPORTED_MEDIA_TYPE),
    (exceptions.Throttled, ErrorCode.RATE_LIMITED),
]


def error_body(code: str, message: str, http_status: int, **extra: Any) -> dict[str, Any]:
    return {"code": code, "message": message, "status": http_status, **extra}


def _code_for(exc: exceptions.APIException) -> str:
    if isinstance(exc, Refused):
        return exc.code  # an app's own refusal code, documented by that app's API
    for cls, code in _CODE_BY_CLASS:
        if isinstance(exc, cls):
            return code
    if exc.default_code in ErrorCode.values:
        return exc.default_code
    # Anything else DRF may raise still maps onto the fixed set.
    return ErrorCode.INTERNAL_ERROR if exc.status_code >= 500 else ErrorCode.BAD_REQUEST


def _messages(detail: Any) -> list[str]:
    """Every message of one field as plain text. A list's items and a nested object's
    fields come back from DRF as a dict of their own errors (`{0: [ErrorDetail(...)]}`),
    whose str() would be a Python repr: each of those messages says where it belongs
    instead (an item by its position counted from 1, a nested field by its name)."""
    if isinstance(detail, dict):
        found: list[str] = []
        for where, inner in detail.items():
            label = f"Item {where + 1}" if isinstance(where, int) else str(where)
            found += [f"{label}: {message}" for message in _messages(inner)]
        return found
    if isinstance(detail, list):
        return [message for item in detail for message in _messages(item)]
    return [str(detail)]


def _fields(detail: Any) -> dict[str, list[str]]:
    if isinstance(detail, dict):
        return {str(name): _messages(msgs) for name, msgs in detail.items()}
    return {"non_field_errors": _messages(detail)}


def _body_for(exc: exceptions.APIException, *, wait: float | None) -> dict[str, Any]:
    code = _code_for(exc)
    if isinstance(exc, exceptions.ValidationError):
        fields = _fields(exc.detail)
        names = ", ".join(fields)
        return error_body(code, f"Invalid input: {names}.", exc.status_code, fields=fields)
    if isinstance(exc, exceptions.Throttled):
        message = (
            str(KeysRefused.default_detail)
            if isinstance(exc, KeysRefused)
            else ("Too many requests.")
        )
        if wait is not None:
            message += f" Retry in {math.ceil(wait)} seconds."
        return error_body(code, message, exc.status_code)
    return error_body(code, str(exc.detail), exc.status_code)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, RequestDataTooBig):  # above DATA_UPLOAD_MAX_MEMORY_SIZE
        exc = PayloadTooLarge()
    elif isinstance(exc, SuspiciousOperation):  # e.g. over DATA_UPLOAD_MAX_NUMBER_FIELDS
        exc = BadRequest(SUSPICIOUS)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DATABASE_UNAVAILABLE):  # no bug: petstore/http/unavailable.py
        request = context.get("request")
        log_unavailable(getattr(request, "method", "-"), getattr(request, "path", "-"), exc)
        exc = ServiceUnavailable()

    if not isinstance(exc, exceptions.APIException):
        # A bug: log it with its traceback and answer the Error body, never HTML.
        log.exception("Unhandled error in %s", context.get("view").__class__.__name__)
        set_rollback()
        body = error_body(ErrorCode.INTERNAL_ERROR, "Internal server error.", 500)
        return Response(body, status=500)

    headers = {}
    if auth_header := getattr(exc, "auth_header", None):
        if isinstance(exc, exceptions.AuthenticationFailed):
            # RFC 6750 section 3: say the token itself was refused.
            auth_header += ', error="invalid_token"'
        headers["WWW-Authenticate"] = auth_header
    # Seconds until the client may retry: DRF's Throttled sets `wait` (its stubs omit it).
    wait: float | None = getattr(exc, "wait", None)
    if wait:
        headers["Retry-After"] = str(math.ceil(wait))
    set_rollback()
    body = _body_for(exc, wait=wait)
    # One line per refusal; the request id is stamped on it (petstore.http.requestid), so
    # the X-Request-ID a client reports finds the line that says why.
    request = context.get("request")
    log.info(
        "Refused %s %s: %s %s",
        getattr(request, "method", "-"),
        getattr(request, "path", "-"),
        body["status"],
        body["code"],
        extra={"code": body["code"], "status": body["status"]},
    )
    return Response(body, status=exc.status_code, headers=headers)


# --- Outside DRF ---------------------------------------------------------------


def _is_api(request: HttpRequest) -> bool:
    return request.path == "/v1" or request.path.startswith("/v1/")


def _json_error(code: str, message: str, http_status: int) -> JsonResponse:
    return JsonResponse(error_body(code, message, http_status), status=http_status)


@csrf_exempt
def unknown_path(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Catch-all for /v1: an unknown path is a 404 Error body, whatever the method."""
    return _json_error(ErrorCode.NOT_FOUND, f"No operation at {request.path}.", 404)


def handler400(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return _json_error(ErrorCode.BAD_REQUEST, SUSPICIOUS, 400)
    return defaults.bad_request(request, exception)  # type: ignore[arg-type]


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return unknown_path(request)
    return defaults.page_not_found(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    # Called while Django handles the exception: a middleware's, which no view's handler saw.
    if isinstance(sys.exc_info()[1], DATABASE_UNAVAILABLE):
        if not _is_api(request):
            return unavailable_page()
        unavailable = ServiceUnavailable()
        response = _json_error(unavailable.default_code, str(unavailable.detail), 503)
        response["Retry-After"] = str(unavailable.wait)
        return response
    if _is_api(request):
        return _json_error(ErrorCode.INTERNAL_ERROR, "Internal server error.", 500)
    return defaults.server_error(request)
