"""A database that cannot answer is the service briefly unavailable, not a bug.

PostgreSQL restarting or failing over refuses or drops the connection; a statement past
`statement_timeout`, or a lock wait past `lock_timeout`, is cancelled. Each raises one of
DATABASE_UNAVAILABLE, and the same request will most likely succeed a few seconds later. So
it is answered 503 with `Retry-After: RETRY_AFTER` and logged as one line, not a traceback
(an outage would log one per request): under /v1 by the API's exception handler
(petstore.api.errors, the `service_unavailable` Error body), on every other page by
DatabaseUnavailableMiddleware. A middleware that meets it before any view (the custom
domains' routing, the session, the sign-in lock-out) reaches Django's 500 handler instead,
which answers the same 503 (petstore.api.errors.handler500; Django's own log line for it
stays). The operator hears of it from the 5xx rate and /readyz.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

log = logging.getLogger(__name__)

DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
# Seconds: about what PostgreSQL takes to restart or fail over.
RETRY_AFTER = 5


def log_unavailable(method: str, path: str, exc: BaseException) -> None:
    """The one line an answer of this kind logs: what was asked, and the database's words."""
    log.error(
        "Database unavailable for %s %s: %s: %s",
        method,
        path,
        type(exc).__name__,
        str(exc).strip().partition("\n")[0],
    )


class DatabaseUnavailableMiddleware:
    """A page whose view met DATABASE_UNAVAILABLE: 503 with Retry-After, and a page that
    reads nothing from the database (base.html's signed-in user and messages would). Under
    /v1 the API's own handler has already answered with its Error body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, DATABASE_UNAVAILABLE):
            return None
        log_unavailable(request.method or "-", request.path, exception)
        return unavailable_page()


def unavailable_page() -> HttpResponse:
    """The 503 page: it reads nothing from the database."""
    page = render_to_string("503.html", {"retry_after": RETRY_AFTER})
    response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER)
    return response
