"""The fixed set of error codes and the API's own exceptions (no view imports here:
DRF settings import this module while rest_framework.views is loading)."""

from __future__ import annotations

from django.db import models
from rest_framework import exceptions, status

from petstore.http.unavailable import RETRY_AFTER


class ErrorCode(models.TextChoices):
    """The complete, fixed set of `code` values (documented in docs/decisions/pets.md);
    `ErrorCode.values` lists them for the OpenAPI document and the exception handler."""

    BAD_REQUEST = "bad_request"
    VALIDATION_ERROR = "validation_error"
    UNAUTHORIZED = "unauthorized"
    KEY_EXPIRED = "key_expired"
    FORBIDDEN = "forbidden"
    INSUFFICIENT_SCOPE = "insufficient_scope"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NOT_ACCEPTABLE = "not_acceptable"
    IDEMPOTENCY_KEY_IN_USE = "idempotency_key_in_use"
    GONE = "gone"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    RATE_LIMITED = "rate_limited"
    INTERNAL_ERROR = "internal_error"
    SERVICE_UNAVAILABLE = "service_unavailable"


class BadRequest(exceptions.APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "Bad request."
    default_code = ErrorCode.BAD_REQUEST


class KeyExpired(exceptions.AuthenticationFailed):
    default_detail = "This API key has expired; make a new one (Settings → API keys)."
    default_code = ErrorCode.KEY_EXPIRED


class Forbidden(exceptions.PermissionDenied):
    """The caller may see this, but their role may not do it."""

    default_detail = "Your role on this project does not allow this."
    default_code = ErrorCode.FORBIDDEN


class InsufficientScope(exceptions.APIException):
    """The key lacks the scope the operation needs (RFC 6750 section 3.1): told in the
    Error body and in `WWW-Authenticate`, with the scope that would do."""

    status_code = status.HTTP_403_FORBIDDEN
    default_code = ErrorCode.INSUFFICIENT_SCOPE

    def __init__(self, scope: str, realm: str) -> None:
        scope = str(scope)  # a Scope member reads as its value
        super().__init__(f"This API key lacks the scope {scope!r}.")
        self.auth_header = f'Bearer realm="{realm}", error="insufficient_scope", scope="{scope}"'


class Gone(exceptions.APIException):
    status_code = status.HTTP_410_GONE
    default_detail = "This operation has been removed."
    default_code = ErrorCode.GONE


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body is too large."
    default_code = ErrorCode.PAYLOAD_TOO_LARGE


class IdempotencyKeyInUse(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "A request with this Idempotency-Key is still being processed; retry later."
    default_code = ErrorCode.IDEMPOTENCY_KEY_IN_USE


class IdempotencyKeyReused(exceptions.APIException):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_detail = "This Idempotency-Key was already used with a different request."
    default_code = ErrorCode.IDEMPOTENCY_KEY_REUSED


class ServiceUnavailable(exceptions.APIException):
    """The database refused or lost the request's connection, or cancelled its statement
    (a restart, a failover, `statement_timeout`): nothing was written, and the same request
    may succeed in a few seconds. `wait` becomes the Retry-After header."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The service is briefly unavailable; retry the request shortly."
    default_code = ErrorCode.SERVICE_UNAVAILABLE
    wait = RETRY_AFTER


class KeysRefused(exceptions.Throttled):
    """Too many refused bearer keys from this client address (throttles.FailedKeyThrottle):
    a 429 `rate_limited` whose message says which limit, with Retry-After."""

    default_detail = "Too many refused API keys from this address."


class Refused(exceptions.APIException):
    """A rule of an app's services said no: its sentence and its own stable `code` (e.g. a
    domain service's `plan_required`), carried to the Error body as they are. The platform
    does not list these codes: each app's API documents the codes of its own refusals, and
    ErrorCode stays the platform's fixed set."""

    status_code: int = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_detail = "The request was refused."
    default_code = "refused"

    def __init__(self, message: str, *, code: str, http_status: int) -> None:
        super().__init__(message, code)
        self.code = code
        self.status_code = http_status
